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

Expected<std::unique_ptr<orc::LLJIT>>
spconv::run::linkObjects(std::vector<std::unique_ptr<MemoryBuffer>> objects) {
  // The linking layer the ExecutionEngine uses, so the objects link the way
  // its own do.
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
  for (std::unique_ptr<MemoryBuffer> &object : objects)
    if (Error error = (*jit)->addObjectFile(std::move(object)))
      return std::move(error);
  return std::move(*jit);
}

Expected<LoadedObject>
spconv::run::loadObjects(std::vector<std::unique_ptr<MemoryBuffer>> objects,
                         StringRef function) {
  auto jit = linkObjects(std::move(objects));
  if (!jit)
    return jit.takeError();
  // ExecutionEngine's packed wrappers are named _mlir_<function>.
  auto address = (*jit)->lookup(("_mlir_" + function).str());
  if (!address)
    return address.takeError();
  LoadedObject loaded;
  loaded.jit = std::move(*jit);
  loaded.packed = address->toPtr<void (*)(void **)>();
  return loaded;
}
