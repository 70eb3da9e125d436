# cmake -DINPUT=libopenblas.a -DOUTPUT=libmodelc_openblas.a -DAR=ar
#       -DCORES="CORE2;PENRYN;..." -P TrimOpenBlas.cmake
# Copies the static OpenBLAS without the members of the CPU generations in
# CORES: every member named *_<CORE>.o (each generation's kernels and its
# gotoblas_<CORE> table). The link defines gotoblas_<CORE> as another
# generation's table (OpenBlasCores.cmake).
execute_process(COMMAND ${AR} t ${INPUT} OUTPUT_VARIABLE members
                RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${AR} t ${INPUT} failed")
endif()
string(REPLACE "\n" ";" members "${members}")
string(REPLACE ";" "|" alternatives "${CORES}")
set(dropped)
foreach(member IN LISTS members)
  if(member MATCHES "_(${alternatives})\\.o$")
    list(APPEND dropped ${member})
  endif()
endforeach()
list(LENGTH dropped count)
if(count EQUAL 0)
  message(FATAL_ERROR "${INPUT} has no member of ${CORES}: not the "
                      "DYNAMIC_ARCH OpenBLAS that OpenBlasCores.cmake knows")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E copy ${INPUT} ${OUTPUT}.tmp
                RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "cannot copy ${INPUT} to ${OUTPUT}.tmp")
endif()
execute_process(COMMAND ${AR} d ${OUTPUT}.tmp ${dropped} RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${AR} d failed on ${OUTPUT}.tmp")
endif()
file(RENAME ${OUTPUT}.tmp ${OUTPUT})
message(STATUS "${OUTPUT}: ${count} members of ${CORES} left out")
