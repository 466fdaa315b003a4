# ctest driver for fuzz.<name>.seeds: the target writes its seeds into WORK_DIR, then runs each
# of them once (-runs=0: the corpus is replayed, nothing is mutated). A crash, a sanitizer
# report or an uncaught exception on a valid file fails the test.
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} -E env STRATA_FUZZ_WRITE_SEEDS=${WORK_DIR} ${TARGET}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${TARGET} could not write its seeds (${rc}):\n${out}\n${err}")
endif()
file(GLOB seeds ${WORK_DIR}/*)
list(LENGTH seeds count)
execute_process(COMMAND ${TARGET} -runs=0 ${WORK_DIR}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${TARGET} failed on its ${count} seeds (${rc}):\n${out}\n${err}")
endif()
message(STATUS "${TARGET}: ${count} seeds replayed")
