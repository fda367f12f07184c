# samsa_library(NAME DEPS dep... TEST_DEPS dep...)
# One folder under src/ = one static library named samsa_<NAME>. Sources are
# every *.cc in the folder except *_test.cc and *_main.cc; the *_test.cc files
# form one GoogleTest binary <NAME>_test registered with ctest (label "unit"),
# except in the fuzz build (SAMSA_FUZZ).
# Globbing keeps the build files out of every change that adds a file.
#
# DEPS are the layers this one includes directly, and nothing else; TEST_DEPS
# are extra libraries only the test binary links. The include path is all of
# src/ (one root, so `#include "storage/log.h"` reads the same everywhere), so
# the compiler alone would accept any include: tests/layering/
# check_layering.py holds the allowed-dependency table (docs/design.md,
# "Layers") and checks the DEPS against it and every #include against the
# DEPS. It runs in every build (target samsa_layering below) and as the ctest
# test "layering".
function(samsa_library NAME)
  cmake_parse_arguments(ARG "" "" "DEPS;TEST_DEPS" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  file(GLOB tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*_test.cc)
  file(GLOB mains CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*_main.cc)
  if(tests)
    list(REMOVE_ITEM sources ${tests})
  endif()
  if(mains)
    list(REMOVE_ITEM sources ${mains})
  endif()
  if(sources)
    add_library(samsa_${NAME} STATIC ${sources})
    target_include_directories(samsa_${NAME} PUBLIC ${CMAKE_SOURCE_DIR}/src)
    target_link_libraries(samsa_${NAME} PUBLIC ${ARG_DEPS})
  else()  # headers only, so far
    add_library(samsa_${NAME} INTERFACE)
    target_include_directories(samsa_${NAME} INTERFACE ${CMAKE_SOURCE_DIR}/src)
    target_link_libraries(samsa_${NAME} INTERFACE ${ARG_DEPS})
  endif()
  if(tests AND NOT SAMSA_FUZZ)  # the fuzz build makes fuzz targets only
    add_executable(${NAME}_test ${tests})
    target_link_libraries(${NAME}_test PRIVATE samsa_${NAME} ${ARG_TEST_DEPS} GTest::gtest GTest::gmock GTest::gtest_main)
    gtest_discover_tests(${NAME}_test
      WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
      PROPERTIES LABELS unit
      DISCOVERY_MODE PRE_TEST)
  endif()
endfunction()
