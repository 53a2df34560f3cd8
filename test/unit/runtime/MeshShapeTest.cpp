//===- MeshShapeTest.cpp - the shape both targets' meshes share -----------===//
//
// Coordinates are row-major over the axes (first axis slowest), each
// axis's split puts the ranks that differ only in that coordinate in one
// communicator, ordered by it; bad sizes are refused with a message.
//
//===----------------------------------------------------------------------===//

#include "coconet/mesh_shape.h"

#include <catch2/catch.hpp>

#include <map>
#include <set>

using namespace coconet::rt;

namespace {
/// A MeshShape with its protected parts reachable.
struct Shape : MeshShape {
  using MeshShape::initShape;
  using MeshShape::splitColor;
  using MeshShape::splitKey;
};
} // namespace

TEST_CASE("a mesh shape numbers ranks row-major and splits per axis",
          "[runtime][mesh]") {
  // 2 x 3: rank r has coordinates (r / 3, r % 3).
  std::map<std::pair<unsigned, int>, std::set<std::pair<int, int>>> groups;
  for (int rank = 0; rank < 6; ++rank) {
    Shape s;
    REQUIRE(s.initShape({2, 3}, 6, rank).ok());
    CHECK(s.numAxes() == 2);
    CHECK(s.rank() == rank);
    CHECK(s.size() == 6);
    CHECK(s.coord(0) == rank / 3);
    CHECK(s.coord(1) == rank % 3);
    for (unsigned axis = 0; axis < 2; ++axis)
      groups[{axis, s.splitColor(axis)}].insert({s.splitKey(axis), rank});
  }
  // Axis 0: three groups of two ({0,3}, {1,4}, {2,5}); axis 1: two of three.
  std::set<std::set<std::pair<int, int>>> axis0, axis1;
  for (const auto &[key, members] : groups)
    (key.first == 0 ? axis0 : axis1).insert(members);
  CHECK(axis0 == std::set<std::set<std::pair<int, int>>>{
                     {{0, 0}, {1, 3}}, {{0, 1}, {1, 4}}, {{0, 2}, {1, 5}}});
  CHECK(axis1 == std::set<std::set<std::pair<int, int>>>{
                     {{0, 0}, {1, 1}, {2, 2}}, {{0, 3}, {1, 4}, {2, 5}}});
}

TEST_CASE("a mesh shape refuses sizes that do not make the world",
          "[runtime][mesh]") {
  Shape s;
  Status product = s.initShape({2, 2}, 6, 0);
  CHECK_FALSE(product.ok());
  CHECK(product.message() == "the mesh has 4 ranks, the world 6");
  Status zero = s.initShape({0, 6}, 6, 0);
  CHECK_FALSE(zero.ok());
  CHECK(zero.message() == "a mesh axis has size 0");
}
