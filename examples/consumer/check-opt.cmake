# Lowers INPUT with spconv-to-cpu through OPT (consumer-opt, or mlir-opt with
# PLUGIN loaded) and checks that only LLVM dialect host code is left.
if(PLUGIN)
  set(args --load-dialect-plugin=${PLUGIN} --load-pass-plugin=${PLUGIN}
      --pass-pipeline=builtin.module\(spconv-to-cpu\))
else()
  set(args --spconv-to-cpu)
endif()
execute_process(COMMAND ${OPT} ${INPUT} ${args}
  OUTPUT_VARIABLE lowered ERROR_VARIABLE errors RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${OPT} failed (${status}):\n${errors}")
endif()
if(NOT lowered MATCHES "llvm.func @net\\(" OR lowered MATCHES "spconv\\.")
  message(FATAL_ERROR "${OPT} did not lower @net to the LLVM dialect:\n"
    "${lowered}")
endif()
