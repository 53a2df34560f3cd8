//===- run_program.h - the one implementation of a generated driver -*- C++
//-*-===//
//
// What every generated driver's main() does, once, for any program: parse
// the command line, bind the sizes and segment tables, open the target's
// session, create the program, fill its parameters as the simulator does,
// run one step, print and write its results, then time more steps. The
// program is a ProgramDescription (coconet/driver.h: its cc_description
// and entry points); the target gives its
// Block (host copy and where the program reads it) and Session (the
// communicator and stream). Instantiated once per target library
// (src/cpu/driver_run.cpp, src/cuda/driver_run.cpp), so a driver's own
// text is its tables. Private to the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_SRC_DRIVER_RUN_PROGRAM_H
#define COCONET_RUNTIME_SRC_DRIVER_RUN_PROGRAM_H

#include "coconet/driver.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace coconet::rt::driver {

/// A program object, destroyed by its description's destroy().
class ProgramObject {
public:
  explicit ProgramObject(const ProgramDescription &d) : d_(d) {}
  ProgramObject(const ProgramObject &) = delete;
  ProgramObject &operator=(const ProgramObject &) = delete;
  ~ProgramObject() {
    if (p_)
      d_.destroy(p_);
  }
  void **slot() { return &p_; }
  void *get() const { return p_; }

private:
  const ProgramDescription &d_;
  void *p_ = nullptr;
};

/// The driver: exit status 0, 1 (a failure) or 2 (a usage error, or a
/// result that cannot be written). `open()` opens `session` on the
/// transport's ranks.
template <class Block, class Session, class Open>
int runProgram(const ProgramDescription &driven, Session &session, Open open,
               Transport &transport, int argc, char **argv) {
  const cc_description &d = *driven.program;
  const char *const name = d.name;
  Options options;
  bool help = false;
  Status st = parseArgs(argc, argv, name, &options, &help);
  if (help) {
    if (transport.rank() == 0)
      std::printf("%s", usage(name).c_str());
    return 0;
  }
  // After each phase every rank learns whether some rank failed (and all
  // exit with the same status); rank 0 prints each distinct error once.
  auto agreeOn = [&](int code) { return agree(transport, st, code, name); };
  if (st.ok()) {
    std::vector<std::string> sizeNames(d.size_names,
                                       d.size_names + d.num_sizes);
    std::vector<ParamName> params;
    for (uint32_t i = 0; i < d.num_params; ++i)
      params.push_back(
          {d.blocks[i].name, static_cast<DType>(d.blocks[i].dtype)});
    st = checkNames(options, sizeNames, params);
  }
  if (d.num_tables > 0 && st.ok()) {
    std::vector<std::string> tables;
    for (uint32_t i = 0; i < d.num_tables; ++i)
      tables.push_back(d.tables[i].name);
    st = checkTableNames(options, tables);
  }
  std::vector<int64_t> sizes(d.num_sizes, 0);
  for (uint32_t i = 0; i < d.num_sizes; ++i) {
    // A table's count is bound with its table.
    bool count = false;
    for (uint32_t t = 0; t < d.num_tables; ++t)
      count = count || d.tables[t].count_size == i;
    if (count || !st.ok())
      continue;
    st = sizeOf(options, d.size_names[i],
                static_cast<int32_t>(i) == d.world_size ? transport.size() : 0,
                &sizes[i]);
  }
  // Segment tables: read or generated as the simulator does; their
  // lengths are create()'s.
  std::vector<SegmentTable> tables(d.num_tables);
  std::vector<std::vector<int64_t>> lengths(d.num_tables);
  std::vector<const int64_t *> tableData(d.num_tables, nullptr);
  for (uint32_t t = 0; t < d.num_tables; ++t) {
    const cc_table &tb = d.tables[t];
    int64_t length = 0;
    if (st.ok())
      st = extentOf(tb.length, sizes.data(), d.size_names, tb.name, &length);
    if (st.ok())
      st = segmentTable(options, tb.name, t, d.size_names[tb.count_size],
                        tb.length_name, length, &sizes[tb.count_size],
                        &tables[t]);
    lengths[t] = tables[t].lengths();
    tableData[t] = lengths[t].data();
  }
  // A usage error: exit status 2.
  if (int code = agreeOn(2))
    return code;
  std::vector<int64_t> axisSizes;
  for (uint32_t a = 0; a < d.num_axes; ++a)
    axisSizes.push_back(sizes[d.axis_sizes[a]]);
  const std::vector<int64_t> coords =
      coordinatesOf(axisSizes, transport.rank());
  st = open();
  if (int code = agreeOn(1))
    return code;
  ProgramObject program(driven);
  st = driven.create(&session, sizes.data(), tableData.data(), program.slot());
  if (int code = agreeOn(1))
    return code;
  if (d.has_path && transport.rank() == 0 && !options.quiet)
    std::printf("%s: %s\n", name, driven.path(program.get()));
  // The parameters, filled as the simulator fills them; the outputs.
  std::unique_ptr<Block[]> blocks(new Block[d.num_blocks]);
  for (uint32_t i = 0; i < d.num_blocks; ++i) {
    const cc_block &b = d.blocks[i];
    void *bound = b.symmetric && !options.staging
                      ? driven.symmetric(program.get(), i)
                      : nullptr;
    TensorInfo info;
    if (st.ok())
      st = tensorInfoOf(d, b, b.name, sizes.data(), &info);
    if (st.ok())
      st = blocks[i].make(std::move(info), axisSizes, coords, bound);
    if (i >= d.num_params)
      continue;
    if (st.ok())
      st = fillInput(blocks[i].info, options, axisSizes, coords,
                     blocks[i].placement, blocks[i].host.data());
    if (st.ok())
      st = blocks[i].upload();
  }
  if (int code = agreeOn(1))
    return code;
  std::vector<void *> args(d.num_blocks);
  for (uint32_t i = 0; i < d.num_blocks; ++i)
    args[i] = d.blocks[i].kind == CC_BLOCK_SCALAR
                  ? static_cast<void *>(blocks[i].host.data())
                  : blocks[i].pointer();
  auto runStep = [&]() -> Status {
    return driven.step(program.get(), args.data());
  };
  // One step, then its results.
  st = runStep();
  if (st.ok())
    st = session.synchronize();
  if (int code = agreeOn(1))
    return code;
  for (uint32_t r = 0; r < d.num_results; ++r) {
    const cc_result &res = d.results[r];
    Block &result = blocks[res.block];
    if (st.ok())
      st = result.download();
    TensorInfo info;
    if (st.ok())
      st = tensorInfoOf(d, d.blocks[res.block], res.name, sizes.data(), &info);
    if (st.ok() && !options.quiet)
      printSummary(info, transport, result.placement, result.host.data());
    if (st.ok() && !options.outputDir.empty())
      st = writeResult(info, options, axisSizes, transport, result.host.data());
    // A result that cannot be written: exit status 2.
    if (int code = agreeOn(st.code() == StatusCode::IoError ? 2 : 1))
      return code;
  }
  // More steps, timed (their results are not written).
  if (options.iterations > 1 || options.warmup > 0) {
    for (int i = 0; i < options.warmup && st.ok(); ++i)
      st = runStep();
    if (st.ok())
      st = session.synchronize();
    if (int code = agreeOn(1))
      return code;
    // --step-times: when each step ended, waiting for it.
    std::vector<double> steps(options.stepTimes ? options.iterations : 0);
    transport.barrier();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < options.iterations && st.ok(); ++i) {
      st = runStep();
      if (options.stepTimes && st.ok()) {
        st = session.synchronize();
        steps[i] = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
      }
    }
    if (st.ok())
      st = session.synchronize();
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (int code = agreeOn(1))
      return code;
    // The slowest rank's time, and when each step ended on the last rank
    // to end it: each step's time is then the time between two such ends,
    // and they add up to the slowest rank's (the fastest step is at most
    // the mean).
    transport.maxOf(&seconds, 1);
    transport.maxOf(steps.data(), steps.size());
    stepDurations(steps);
    if (transport.rank() == 0)
      std::printf("%s\n", timingLine(name, options.iterations, transport.size(),
                                     seconds, steps)
                              .c_str());
  }
  return 0;
}

} // namespace coconet::rt::driver

#endif // COCONET_RUNTIME_SRC_DRIVER_RUN_PROGRAM_H
