#===- cmake/Install.cmake - What consumers of spconv-mlir see -------------===#
#
# The compiler libraries are static archives (position-independent) on top
# of the shared libMLIR.so: a consumer links the parts it uses into its own
# binaries, and the process holds one copy of MLIR, the one its other MLIR
# code uses. Their C++ API is that of MLIR 22, which promises no ABI across
# builds, so shared libraries of it would add a version to track and nothing
# to keep stable. What is promised stable is shared: the runtime's C ABI
# (libspconv_runtime.so.N) and the C API (libSpConvCAPI.so.0.1 while the
# project is 0.x). docs/Embedding.md lists the targets.
#
# Every target has a SpConv:: name, the same through add_subdirectory (an
# ALIAS) and find_package(SpConv) (an exported target).
#
#===----------------------------------------------------------------------===#

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# One name for the conversion libraries.
add_library(SpConvConversion INTERFACE)
target_link_libraries(SpConvConversion INTERFACE
  SpConvToSCF SpConvParallelLoopsToGPU SpConvGPUKernelsToCPU SpConvToLLVM)

# target -> exported name.
set(SPCONV_EXPORTED_LIBRARIES
  SpConvIR IR
  SpConvTransforms Transforms
  SpConvToSCF ToSCF
  SpConvParallelLoopsToGPU ParallelLoopsToGPU
  SpConvGPUKernelsToCPU GPUKernelsToCPU
  SpConvToLLVM ToLLVM
  SpConvConversion Conversion
  SpConvPipelines Pipelines
  SpConvCAPI CAPI
  SpConvPlugin Plugin
  )
set(SPCONV_INSTALLED_TARGETS)
while(SPCONV_EXPORTED_LIBRARIES)
  list(POP_FRONT SPCONV_EXPORTED_LIBRARIES target name)
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  add_library(SpConv::${name} ALIAS ${target})
  list(APPEND SPCONV_INSTALLED_TARGETS ${target})
endwhile()
if(TARGET spconv_runtime)
  add_library(SpConv::Runtime ALIAS spconv_runtime)
endif()
if(TARGET spconv_runtime_cuda)
  add_library(SpConv::RuntimeCUDA ALIAS spconv_runtime_cuda)
endif()
if(TARGET spconv_store)
  add_library(SpConv::Store ALIAS spconv_store)
endif()
if(TARGET spconv-toolchain-id)
  # Beside the runtime: a deployment box with the runtime and a filled
  # kernel store, but no compiler, computes the keys the store was filled
  # under (docs/Python.md, "Deploying without the compiler").
  install(FILES ${SPCONV_TOOLCHAIN_ID} DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()

# Usage requirements of the compiler libraries: our headers (sources and
# generated .inc), MLIR's and LLVM's, C++17. Installed, MLIR's come from
# SpConvConfig.cmake, which finds the MLIR they were built with.
foreach(target SpConvIR SpConvTransforms SpConvToSCF SpConvParallelLoopsToGPU
    SpConvGPUKernelsToCPU SpConvToLLVM SpConvPipelines)
  target_include_directories(${target} INTERFACE
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
    $<BUILD_INTERFACE:${MLIR_INCLUDE_DIRS}>
    $<BUILD_INTERFACE:${LLVM_INCLUDE_DIRS}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(${target} INTERFACE cxx_std_17)
endforeach()
target_include_directories(SpConvCAPI INTERFACE
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)

# The tools, as imported executables of the package.
set(SPCONV_TOOLS spconv-opt spconv-compile)
if(TARGET spconv-run)
  list(APPEND SPCONV_TOOLS spconv-run spconv-store)
endif()
foreach(tool ${SPCONV_TOOLS})
  add_executable(SpConv::${tool} ALIAS ${tool})
endforeach()

install(TARGETS ${SPCONV_INSTALLED_TARGETS} ${SPCONV_TOOLS}
  EXPORT SpConvTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# Headers: C++ (with the generated .inc), TableGen sources (for consumers'
# own TableGen against ours) and the C API.
install(DIRECTORY include/SpConv include/spconv-c
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
install(DIRECTORY ${PROJECT_BINARY_DIR}/include/SpConv
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.inc")

set(SPCONV_CMAKE_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/spconv)
install(EXPORT SpConvTargets
  NAMESPACE SpConv::
  DESTINATION ${SPCONV_CMAKE_PACKAGE_DIR})
set(SPCONV_HAS_CUDA_RUNTIME OFF)
if(TARGET spconv_runtime_cuda)
  set(SPCONV_HAS_CUDA_RUNTIME ON)
endif()
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/SpConvConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/SpConvConfig.cmake
  INSTALL_DESTINATION ${SPCONV_CMAKE_PACKAGE_DIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_LIBDIR)
# 0.x: a minor version may break the C++ API.
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cmake/SpConvConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/cmake/SpConvConfig.cmake
  ${PROJECT_BINARY_DIR}/cmake/SpConvConfigVersion.cmake
  DESTINATION ${SPCONV_CMAKE_PACKAGE_DIR})

# The Python front end (python/spconv_mlir, docs/Python.md): the package,
# and _install.py, which tells it where the prefix is relative to itself, so
# it finds the installed spconv-compile and runtime without configuration.
set(SPCONV_PYTHON_INSTALL_DIR "${CMAKE_INSTALL_LIBDIR}/python3/site-packages"
  CACHE STRING "Where cmake --install puts the spconv_mlir Python package (relative to the prefix)")
install(DIRECTORY python/spconv_mlir
  DESTINATION ${SPCONV_PYTHON_INSTALL_DIR}
  FILES_MATCHING PATTERN "*.py"
  PATTERN "__pycache__" EXCLUDE)
file(RELATIVE_PATH SPCONV_PYTHON_TO_PREFIX
  "/prefix/${SPCONV_PYTHON_INSTALL_DIR}/spconv_mlir" "/prefix")
file(WRITE ${PROJECT_BINARY_DIR}/python/_install.py
  "# Written by cmake --install: the install prefix, relative to this package.\n"
  "PREFIX = \"${SPCONV_PYTHON_TO_PREFIX}\"\n")
install(FILES ${PROJECT_BINARY_DIR}/python/_install.py
  DESTINATION ${SPCONV_PYTHON_INSTALL_DIR}/spconv_mlir)
