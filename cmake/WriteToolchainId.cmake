#===- cmake/WriteToolchainId.cmake - The toolchain's identity -------------===#
#
# Script mode (cmake -P), run after spconv-compile or a runtime library is
# rebuilt:
#
#   cmake -DOUTPUT=<file> -DLLVM_VERSION=<version> -DFILES=<a;b;...> -P ...
#
# Writes one line, the SHA-256 of the files' contents and the LLVM version:
# what a compiled library's key in the kernel store takes from the tools
# that made it. It sits beside the runtime libraries, so a machine that has
# the runtime but not the compiler (a deployment box) computes the same keys
# and finds the libraries a store filled elsewhere holds (docs/Python.md,
# "Deploying without the compiler").
#
#===----------------------------------------------------------------------===#

set(parts "llvm ${LLVM_VERSION}")
foreach(file IN LISTS FILES)
  file(SHA256 "${file}" digest)
  get_filename_component(name "${file}" NAME)
  string(APPEND parts "\n${name} ${digest}")
endforeach()
string(SHA256 id "${parts}")
# Rewritten only when it changes, so nothing downstream rebuilds for nothing.
set(old "")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL "${id}\n")
  file(WRITE "${OUTPUT}" "${id}\n")
endif()
