//===- RelayTable.h - a hand-written table that relays within a step -*- C++
//-*-===//
//
// A ReduceScatter over 3 ranks (1 chunk a rank) whose first step both
// changes rank 1's copy of chunk 2 (0 -> 1) and sends that copy on (1 -> 2):
// rank 2 must get rank 1's value from before the step, or it counts rank
// 0's contribution twice (once through rank 1, once in step 1 from rank
// 0). The runtimes' tests run it (test/runtime/AlgorithmTest.cpp) and the
// unit tests check which of its transfers the team path lands at once
// (test/unit/runtime/CpuTest.cpp).
//
//   step 0: chunk 2 0 -> 1 and 1 -> 2; chunk 0 1 -> 0; chunk 1 0 -> 1
//   step 1: chunk 2 0 -> 2; chunk 0 2 -> 0; chunk 1 2 -> 1
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_TEST_RUNTIME_RELAYTABLE_H
#define COCONET_TEST_RUNTIME_RELAYTABLE_H

#include "coconet/algorithm.h"

namespace coconet_test {

inline const coconet::rt::algorithm::Table &relayTable() {
  using coconet::rt::algorithm::Collective;
  using coconet::rt::algorithm::Transfer;
  static const uint32_t steps[] = {0, 4, 7};
  static const Transfer transfers[] = {
      {2, 0, 1, 1}, {2, 1, 2, 1}, {0, 1, 0, 1}, {1, 0, 1, 1}, // step 0
      {2, 0, 2, 1}, {0, 2, 0, 1}, {1, 2, 1, 1}};              // step 1
  static const coconet::rt::algorithm::Table table = {"relay-ReduceScatter-3",
                                                      Collective::ReduceScatter,
                                                      3,
                                                      1,
                                                      2,
                                                      steps,
                                                      transfers};
  return table;
}

} // namespace coconet_test

#endif // COCONET_TEST_RUNTIME_RELAYTABLE_H
