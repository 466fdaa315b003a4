# ctest driver: install Strata from its build tree into a scratch prefix, then configure, build
# and run tests/downstream against that prefix only.
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
endfunction()
run(${CMAKE_COMMAND} --install ${STRATA_BUILD_DIR} --prefix ${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} -S ${DOWNSTREAM_SOURCE_DIR} -B ${WORK_DIR}/build -G Ninja
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix
    # Strata's own compiler: a clang sanitizer build needs clang's sanitizer runtime, not g++'s.
    -DCMAKE_CXX_COMPILER=${DOWNSTREAM_CXX_COMPILER}
    # A sanitizer build of Strata needs the sanitizer runtime in the downstream link too.
    "-DCMAKE_CXX_FLAGS=${DOWNSTREAM_CXX_FLAGS}")
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/downstream_app)
