//===- Manifest.cpp - Machine-readable description of an object ----------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "Manifest.h"

#include "spconv-rt/SpConvRuntime.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace spconv::compile;
namespace json = llvm::json;

static json::Array describeParams(llvm::ArrayRef<MemRefParam> params) {
  json::Array out;
  for (const MemRefParam &param : params)
    out.push_back(json::Object{{"rank", param.rank},
                               {"element", param.elementName},
                               {"mlir_type", param.mlirType}});
  return out;
}

void spconv::compile::writeManifest(llvm::raw_ostream &os,
                                    const HeaderInfo &info,
                                    llvm::StringRef target,
                                    llvm::ArrayRef<EntryPoint> entries) {
  json::Array entryList;
  for (const EntryPoint &entry : entries)
    entryList.push_back(
        json::Object{{"name", entry.mlirName},
                     {"symbol", entry.symbol},
                     {"arguments", describeParams(entry.arguments)},
                     {"results", describeParams(entry.results)}});
  json::Array libraries;
  for (const std::string &library : info.libraries)
    libraries.push_back(library);
  json::Array profileLabels;
  for (const std::string &label : info.profileLabels)
    profileLabels.push_back(label);
  json::Object manifest{{"format", "spconv-compile-manifest/1"},
                        {"source", info.sourceName},
                        {"target", target},
                        {"compiled_with", info.compiledWith},
                        {"runtime_abi_version", SPCONV_RT_ABI_VERSION},
                        {"gpu_memory", info.gpuMemory},
                        {"libraries", std::move(libraries)},
                        {"profile_labels", std::move(profileLabels)},
                        {"entries", std::move(entryList)}};
  os << llvm::formatv("{0:2}", json::Value(std::move(manifest))) << "\n";
}
