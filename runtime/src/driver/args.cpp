//===- args.cpp - the command line of a generated driver ------------------===//
//
// Options take their value as the next argument or after '='
// (`--seed 7`, `--seed=7`); --size takes comma-separated NAME=VALUE lists
// and may be repeated, like `coconetc sim`'s. Later values win.
//
//===----------------------------------------------------------------------===//

#include "driver_impl.h"

#include "coconet/values.h"

namespace coconet::rt::driver {

namespace {

const char kSummary[] =
    " [--size NAME=N[,NAME=N...]] [--seed N] [--set NAME=VALUE]"
    " [--input NAME=FILE.npy] [--segments TABLE=FILE] [--output-dir DIR]"
    " [--iterations N]"
    " [--warmup N] [--step-times] [--staging] [--quiet]"
    " [--inputs uniform|wide] [--help]";

/// Splits "NAME=VALUE" (both trimmed, neither empty).
bool splitAssignment(std::string_view text, std::string *name,
                     std::string *value) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos)
    return false;
  *name = std::string(detail::trim(text.substr(0, eq)));
  *value = std::string(detail::trim(text.substr(eq + 1)));
  return !name->empty() && !value->empty();
}

} // namespace

std::string usage(const char *program) {
  const std::string p = program ? program : "driver";
  return "usage: " + p + kSummary +
         "\n\n"
         "Runs one step of the program on every rank, as `coconetc sim` "
         "would.\n\n"
         "  --size NAME=N,...     bind size names and mesh axis sizes "
         "(repeatable)\n"
         "  --seed N              seed of the generated inputs (default 1)\n"
         "  --set NAME=VALUE      give a parameter a value (a tensor gets it "
         "in every\n"
         "                        element)\n"
         "  --input NAME=FILE     read a tensor parameter from a .npy file "
         "(global\n"
         "                        tensor; local ones stacked over ranks)\n"
         "  --segments TABLE=FILE read a segment table: lengths (text) or a "
         "1-D "
         "integer\n"
         "                        .npy; a table not given is generated from "
         "the seed\n"
         "                        and its count's --size, as `coconetc sim`\n"
         "  --output-dir DIR      write every result to DIR/<name>.npy\n"
         "  --iterations N        steps to time (default 1)\n"
         "  --warmup N            untimed steps first (default 0)\n"
         "  --step-times          time each timed step on its own (waiting "
         "for it to\n"
         "                        finish) and print the fastest step beside "
         "the mean\n"
         "  --staging             pass the program ordinary memory for the "
         "tensors its\n"
         "                        fused collective kernels share with other "
         "ranks (it\n"
         "                        copies them in and out); by default they "
         "live in the\n"
         "                        program's own symmetric memory (no copy)\n"
         "  --quiet               no summary lines\n"
         "  --inputs KIND         how generated inputs are drawn: uniform "
         "(default) or\n"
         "                        wide (sums depend on their order), as "
         "`coconetc sim`\n"
         "  --help                print this text\n";
}

Status parseArgs(int argc, char **argv, const char *program, Options *out,
                 bool *help) {
  const std::string p = program ? program : "driver";
  auto fail = [&](const std::string &why) {
    // The caller prints the program's name before the message.
    return Status::error(StatusCode::InvalidArgument,
                         why + "\nusage: " + p + kSummary);
  };
  Options options = *out;
  *help = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i] ? argv[i] : "";
    if (arg == "--help" || arg == "-help" || arg == "-h") {
      *help = true;
      return Status::success();
    }
    if (arg.size() < 2 || arg[0] != '-')
      return fail("unexpected argument '" + arg + "'");
    // "--name", "-name", "--name=value".
    std::string name = arg.substr(arg[1] == '-' ? 2 : 1);
    std::string value;
    bool hasValue = false;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
      hasValue = true;
    }
    if (name == "quiet" || name == "staging" || name == "step-times") {
      if (hasValue)
        return fail("--" + name + " takes no value");
      (name == "quiet"     ? options.quiet
       : name == "staging" ? options.staging
                           : options.stepTimes) = true;
      continue;
    }
    // --inputs=uniform|wide: how generated inputs are drawn (as `coconetc
    // sim --inputs`, compiler/sim/Inputs.h).
    if (name == "inputs") {
      if (!hasValue) {
        if (i + 1 >= argc)
          return fail("--inputs needs a value");
        value = argv[++i];
      }
      if (value != "uniform" && value != "wide")
        return fail("--inputs expects uniform or wide, got '" + value + "'");
      options.inputKind =
          value == "wide" ? InputKind::Wide : InputKind::Uniform;
      continue;
    }
    static const char *const kWithValue[] = {
        "size",     "seed",       "set",        "input",
        "segments", "output-dir", "iterations", "warmup"};
    bool known = false;
    for (const char *k : kWithValue)
      known |= name == k;
    if (!known)
      return fail("unknown option '" + arg + "'");
    if (!hasValue) {
      if (i + 1 >= argc)
        return fail("--" + name + " needs a value");
      value = argv[++i];
    }

    if (name == "size") {
      std::string_view rest = value;
      while (true) {
        const size_t comma = rest.find(',');
        std::string_view item = rest.substr(0, comma);
        std::string sizeName, sizeText;
        if (!splitAssignment(item, &sizeName, &sizeText))
          return fail("--size expects NAME=VALUE, got '" + std::string(item) +
                      "'");
        int64_t v = 0;
        if (!detail::parseSigned(sizeText, &v, 10) || v <= 0)
          return fail("--size " + sizeName +
                      " expects an integer from 1 to 2^63-1, got '" + sizeText +
                      "'");
        options.sizes[sizeName] = v;
        if (comma == std::string_view::npos)
          break;
        rest.remove_prefix(comma + 1);
      }
    } else if (name == "seed") {
      if (!detail::parseUnsigned(detail::trim(value), &options.seed))
        return fail("--seed expects an integer from 0 to 2^64-1, got '" +
                    value + "'");
    } else if (name == "set" || name == "input" || name == "segments") {
      std::string key, text;
      if (!splitAssignment(value, &key, &text))
        return fail("--" + name + " expects NAME=VALUE, got '" + value + "'");
      (name == "set"     ? options.values
       : name == "input" ? options.inputs
                         : options.segments)[key] = text;
    } else if (name == "output-dir") {
      if (value.empty())
        return fail("--output-dir needs a directory");
      options.outputDir = value;
    } else {
      int64_t v = 0;
      const bool iterations = name == "iterations";
      if (!detail::parseSigned(detail::trim(value), &v) ||
          v < (iterations ? 1 : 0) || v > INT32_MAX)
        return fail("--" + name + " expects an integer from " +
                    (iterations ? "1" : "0") + " to 2^31-1, got '" + value +
                    "'");
      (iterations ? options.iterations : options.warmup) = static_cast<int>(v);
    }
  }
  for (const auto &[name, value] : options.values)
    if (options.inputs.count(name))
      return fail("parameter '" + name +
                  "' is given by both --set and --input; give it one value");
  *out = std::move(options);
  return Status::success();
}

Status checkNames(const Options &options,
                  const std::vector<std::string> &sizeNames,
                  const std::vector<ParamName> &params) {
  std::string sizeList, paramList;
  for (const std::string &n : sizeNames)
    sizeList += (sizeList.empty() ? "" : ", ") + n;
  for (const ParamName &p : params)
    paramList += (paramList.empty() ? "" : ", ") + std::string(p.name);
  for (const auto &[name, value] : options.sizes) {
    bool known = false;
    for (const std::string &n : sizeNames)
      known |= n == name;
    if (!known)
      return Status::error(StatusCode::InvalidArgument,
                           "--size " + name +
                               ": the program has no size "
                               "named '" +
                               name + "' (its sizes: " + sizeList + ")");
  }
  for (const auto *given : {&options.values, &options.inputs})
    for (const auto &[name, value] : *given) {
      const ParamName *param = nullptr;
      for (const ParamName &p : params)
        if (name == p.name)
          param = &p;
      const bool set = given == &options.values;
      if (!param)
        return Status::error(StatusCode::InvalidArgument,
                             std::string(set ? "--set " : "--input ") + name +
                                 ": the program has no parameter named '" +
                                 name + "' (its parameters: " + paramList +
                                 ")");
      ElementValue v;
      if (set)
        COCONET_RETURN_IF_ERROR(parseSetValue(name, param->dtype, value, &v));
    }
  return Status::success();
}

Status sizeOf(const Options &options, const char *name, int64_t fallback,
              int64_t *out) {
  auto it = options.sizes.find(name);
  if (it != options.sizes.end()) {
    *out = it->second;
    return Status();
  }
  if (fallback > 0) {
    *out = fallback;
    return Status();
  }
  return Status::error(StatusCode::InvalidArgument,
                       std::string("give the size ") + name + " with --size " +
                           name + "=...");
}

Status checkTableNames(const Options &options,
                       const std::vector<std::string> &tables) {
  std::string list;
  for (const std::string &t : tables)
    list += (list.empty() ? "" : ", ") + t;
  for (const auto &[name, file] : options.segments) {
    bool known = false;
    for (const std::string &t : tables)
      known |= t == name;
    if (!known)
      return Status::error(StatusCode::InvalidArgument,
                           "--segments " + name +
                               ": the program has no segment table named '" +
                               name + "'" +
                               (list.empty() ? std::string(" (it has none)")
                                             : " (its tables: " + list + ")"));
  }
  return Status();
}

Status segmentTable(const Options &options, const char *table, uint64_t index,
                    const char *countName, const char *lengthName,
                    int64_t length, int64_t *count, SegmentTable *out) {
  auto file = options.segments.find(table);
  if (file != options.segments.end()) {
    COCONET_RETURN_IF_ERROR(readSegmentTable(file->second, out));
    auto bound = options.sizes.find(countName);
    if (bound != options.sizes.end() && bound->second != out->segments())
      return Status::error(StatusCode::InvalidArgument,
                           "segment table '" + std::string(table) + "' has " +
                               std::to_string(out->segments()) +
                               " segments, but its count " + countName +
                               " is bound to " + std::to_string(bound->second));
    *count = out->segments();
  } else {
    COCONET_RETURN_IF_ERROR(sizeOf(options, countName, 0, count));
    COCONET_RETURN_IF_ERROR(randomSegmentTable(
        *count, length, options.seed, segmentTableStream(index), table, out));
  }
  return out->checkElements(length, lengthName);
}

} // namespace coconet::rt::driver
