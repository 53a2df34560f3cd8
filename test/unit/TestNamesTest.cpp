//===- TestNamesTest.cpp - every test case can be run by its CTest --------===//
//
// catch_discover_tests registers each test case as a CTest that runs the
// unit-test binary with the test case's name as its test spec, escaping
// only ',', '[' and ']'. Any other character Catch2 reads specially makes
// that CTest run something else or nothing (with -w NoTests, fail): a name
// starting with '-' is read as an option (it happened: "--set values must
// fit their type"), '~' as an exclusion, '*' at either end as a wildcard
// that may run others too (one was named "* and / bind tighter ...", and
// happened to match only itself), '"' and '\' as quoting; ';' splits the
// CMake list the name travels in, and blanks at either end are trimmed.
// This test refuses such names.
//
//===----------------------------------------------------------------------===//

#include <catch2/catch.hpp>

#include <string>

namespace {

/// Why CTest cannot run a test case of this name by it, or "".
std::string whyNotRunnable(const std::string &name) {
  if (name.empty())
    return "it is empty";
  if (name.front() == '-')
    return "it starts with '-' (read as an option)";
  if (name.front() == '~')
    return "it starts with '~' (read as an exclusion)";
  if (name.front() == ' ' || name.back() == ' ')
    return "it starts or ends with a blank (trimmed)";
  if (name.front() == '*' || name.back() == '*')
    return "it starts or ends with '*' (a wildcard: it runs others too)";
  for (char c : std::string("\"\\;"))
    if (name.find(c) != std::string::npos)
      return std::string("it holds '") + c + "'";
  return "";
}

} // namespace

TEST_CASE("every test case's name can be run by its CTest", "[meta]") {
  CHECK(whyNotRunnable("-x") != "");
  CHECK(whyNotRunnable("a;b") != "");
  CHECK(whyNotRunnable("values given by --set must fit their type") == "");
  const auto &tests =
      Catch::getRegistryHub().getTestCaseRegistry().getAllTests();
  CHECK(tests.size() > 100);
  for (const Catch::TestCase &t : tests) {
    INFO("test case '" << t.name << "' (" << t.lineInfo << ")");
    CHECK(whyNotRunnable(t.name) == "");
  }
}
