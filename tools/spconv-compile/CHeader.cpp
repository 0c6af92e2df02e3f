//===- CHeader.cpp - The C header of compiled entry points ----------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "CHeader.h"

#include "spconv-rt/SpConvRuntime.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Path.h"

using namespace llvm;
using namespace spconv::compile;

std::string spconv::compile::guardForPath(StringRef path) {
  std::string guard = "SPCONV_AOT_";
  for (char c : sys::path::stem(path))
    guard += isAlnum(c) ? toUpper(c) : '_';
  return guard + "_H";
}

namespace {
/// The ABI, stated once at the top of every header: the descriptors, then
/// the memory notes of the target, then errors and threads.
const char *const abiDescriptors = R"(/*
 * C interface (docs/Compiler.md, "Ahead-of-time compilation"):
 *  - A tensor of rank r is passed as a pointer to a memref descriptor:
 *    element (i0, ..., i(r-1)) is
 *      aligned[offset + i0 * strides[0] + ... + i(r-1) * strides[r-1]]
 *    and sizes[] holds the extents. For an argument, set allocated and
 *    aligned to the data, offset to 0 and row-major strides. Arguments are
 *    only read; they stay the caller's.
 *  - Results come back through the first parameter: a descriptor for one
 *    result, a <function>_results struct of descriptors for several.
)";
const char *const hostMemoryNotes =
    R"( *  - Every result buffer is malloc'ed by the call and belongs to the caller:
 *    free(result.allocated) once per distinct pointer (results may share
 *    one), also after a failed call.
)";
const char *const gpuMemoryNotes =
    R"( *  - CUDA target: every argument must be memory the GPU can read: device
 *    memory (cudaMalloc / cudaMallocAsync, or mgpuMemAlloc(bytes, NULL, 0)
 *    from libspconv_runtime_cuda, filled by cudaMemcpy / mgpuMemcpy) or
 *    managed memory. Every result buffer is GPU memory allocated by the
 *    call, device memory (managed only where the call's own host code
 *    touches it): copy it to the host to read it (cudaMemcpy, or mgpuMemcpy
 *    then mgpuStreamSynchronize(NULL)); it belongs to the caller:
 *    mgpuMemFree(result.allocated, NULL) once per distinct pointer (results
 *    may share one), also after a failed call. Calls return when the GPU is
 *    done; the host code runs on the calling thread, the GPU work on that
 *    thread's stream.
)";
const char *const errorNotes =
    R"( *  - Errors: call spconv_rt_clear_error() before a call; if
 *    spconv_rt_last_error() is not "" after it (same thread), the call
 *    failed and the results are meaningless: the inputs were invalid
 *    (out-of-grid or duplicate sites, bad indices, ...), or memory ran out
 *    (spconv_rt_last_status() == SPCONV_RT_ERR_OUT_OF_MEMORY; results may
 *    then be null buffers, which free as no-ops; a later call may succeed).
)";
const char *const threadNotes =
    R"( *  - Threads: OpenMP's (OMP_NUM_THREADS, omp_set_num_threads()) for the
 *    compiled loops, spconv_rt_set_num_threads() for the runtime's.
 *    Results do not depend on the thread count.
)";

void writeStruct(raw_ostream &os, const MemRefParam &param) {
  std::string name = param.structName();
  std::string macro = "SPCONV_MEMREF_" + std::to_string(param.rank) + "D_" +
                      StringRef(param.elementName).upper() + "_DEFINED";
  // Every generated header defines the same struct the same way: the guard
  // lets one program include the headers of several networks.
  os << "#ifndef " << macro << "\n#define " << macro << "\n";
  os << "typedef struct " << name << " {\n";
  os << "  " << param.cElementType << " *allocated;\n";
  os << "  " << param.cElementType << " *aligned;\n";
  os << "  int64_t offset;\n";
  if (param.rank > 0) {
    os << "  int64_t sizes[" << param.rank << "];\n";
    os << "  int64_t strides[" << param.rank << "];\n";
  }
  os << "} " << name << ";\n#endif\n\n";
}

void writeEntry(raw_ostream &os, const EntryPoint &entry) {
  os << "/* @" << entry.mlirName << "\n";
  for (auto [i, param] : enumerate(entry.arguments))
    os << " *   arg" << i << ": " << param.mlirType << "\n";
  for (auto [i, param] : enumerate(entry.results)) {
    os << " *   result";
    if (entry.results.size() > 1)
      os << i;
    os << ": " << param.mlirType << "\n";
  }
  os << " */\n";

  std::string resultsType = entry.symbol + "_results";
  if (entry.results.size() > 1) {
    os << "typedef struct " << resultsType << " {\n";
    for (auto [i, param] : enumerate(entry.results))
      os << "  " << param.structName() << " result" << i << ";\n";
    os << "} " << resultsType << ";\n";
  }

  SmallVector<std::string> params;
  if (entry.results.size() == 1)
    params.push_back(entry.results.front().structName() + " *result");
  else if (entry.results.size() > 1)
    params.push_back(resultsType + " *results");
  for (auto [i, param] : enumerate(entry.arguments))
    params.push_back("const " + param.structName() + " *arg" +
                     std::to_string(i));
  os << "void " << entry.symbol << "(";
  if (params.empty())
    os << "void";
  for (auto [i, param] : enumerate(params))
    os << (i ? ",\n    " : "") << param;
  os << ");\n\n";
}
} // namespace

void spconv::compile::writeCHeader(raw_ostream &os, const HeaderInfo &info,
                                   ArrayRef<EntryPoint> entries) {
  os << "/* Generated by spconv-compile from " << info.sourceName << " ("
     << info.compiledWith << "). Do not edit. */\n";
  os << abiDescriptors << (info.gpuMemory ? gpuMemoryNotes : hostMemoryNotes)
     << errorNotes << (info.gpuMemory ? "" : threadNotes);
  os << " *  - Link with:";
  for (const std::string &library : info.libraries)
    os << " " << library;
  if (info.libraries.empty())
    os << " the C library only";
  os << ".\n */\n";
  if (!info.profileLabels.empty()) {
    os << "\n/* Compiled with --profile: after a call, "
          "spconv_rt_profile_get(id, "
          "...)\n * gives the time and rows of each operation:\n";
    for (auto [id, label] : enumerate(info.profileLabels)) {
      // A label must not end the comment.
      std::string text = label;
      for (size_t at; (at = text.find("*/")) != std::string::npos;)
        text.replace(at, 2, "* /");
      os << " *  " << id << ": " << text << "\n";
    }
    os << " */\n";
  }
  os << "\n#ifndef " << info.guard << "\n#define " << info.guard << "\n\n";
  os << "#include <stdint.h>\n\n#include \"spconv-rt/SpConvRuntime.h\"\n\n";
  // The object calls the runtime of the ABI this compiler targets.
  os << "#if !defined(SPCONV_RT_ABI_VERSION) || SPCONV_RT_ABI_VERSION != "
     << SPCONV_RT_ABI_VERSION << "\n#error \"" << info.sourceName
     << " was compiled for the spconv runtime ABI " << SPCONV_RT_ABI_VERSION
     << "\"\n#endif\n\n";
  os << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";

  StringSet<> written;
  for (const EntryPoint &entry : entries)
    for (const auto *params : {&entry.arguments, &entry.results})
      for (const MemRefParam &param : *params)
        if (written.insert(param.structName()).second)
          writeStruct(os, param);

  for (const EntryPoint &entry : entries)
    writeEntry(os, entry);

  os << "#ifdef __cplusplus\n} /* extern \"C\" */\n#endif\n\n";
  os << "#endif /* " << info.guard << " */\n";
}
