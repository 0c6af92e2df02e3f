//===- ObjectLoader.cpp - Run a cached object without recompiling ---------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "ObjectLoader.h"

#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/RTDyldObjectLinkingLayer.h"
#include "llvm/ExecutionEngine/SectionMemoryManager.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace llvm;
using namespace spconv::run;

LoadedObject::LoadedObject() = default;
LoadedObject::LoadedObject(LoadedObject &&) = default;
LoadedObject &LoadedObject::operator=(LoadedObject &&) = default;
LoadedObject::~LoadedObject() = default;

Expected<LoadedObject>
spconv::run::loadObject(std::unique_ptr<MemoryBuffer> object,
                        StringRef function) {
  // The linking layer the ExecutionEngine uses, so the object links the way
  // it did when it was compiled.
  auto jit = orc::LLJITBuilder()
                 .setObjectLinkingLayerCreator(
                     [](orc::ExecutionSession &session)
                         -> Expected<std::unique_ptr<orc::ObjectLayer>> {
                       return std::make_unique<orc::RTDyldObjectLinkingLayer>(
                           session, [](const MemoryBuffer &) {
                             return std::make_unique<SectionMemoryManager>();
                           });
                     })
                 .create();
  if (!jit)
    return jit.takeError();
  // The runtime, OpenMP and memrefCopy are linked into this process.
  orc::JITDylib &library = (*jit)->getMainJITDylib();
  auto processSymbols =
      orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
          (*jit)->getDataLayout().getGlobalPrefix());
  if (!processSymbols)
    return processSymbols.takeError();
  library.addGenerator(std::move(*processSymbols));
  if (Error error = (*jit)->addObjectFile(std::move(object)))
    return std::move(error);
  // ExecutionEngine's packed wrappers are named _mlir_<function>.
  auto address = (*jit)->lookup(("_mlir_" + function).str());
  if (!address)
    return address.takeError();
  LoadedObject loaded;
  loaded.jit = std::move(*jit);
  loaded.packed = address->toPtr<void (*)(void **)>();
  return loaded;
}
