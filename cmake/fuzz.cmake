# The fuzz build (SAMSA_FUZZ=ON; `make fuzz-build` configures it with
# clang++-14 in build-fuzz/). Everything is compiled with libFuzzer's
# coverage instrumentation plus AddressSanitizer and UndefinedBehaviorSanitizer
# (any UB aborts, so the fuzzer reports it as a crash); the targets link
# libFuzzer's main (samsa_fuzz_target in tests/fuzz/CMakeLists.txt).
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "SAMSA_FUZZ needs clang (libFuzzer): -DCMAKE_CXX_COMPILER=clang++-14")
endif()

# Only the libraries the fuzz targets link, lowest layer first (the
# controller and group codecs are single files: tests/fuzz/CMakeLists.txt).
set(samsa_fuzz_libs base model protocol io storage)

set(SAMSA_SANITIZERS "address,undefined")
add_compile_options(-fsanitize=fuzzer-no-link,${SAMSA_SANITIZERS} -fno-sanitize-recover=all
                    -fno-omit-frame-pointer -gline-tables-only)
add_link_options(-fsanitize=${SAMSA_SANITIZERS})
# Clang warns about things GCC does not; the GCC build (make build) is the
# one whose warnings are errors, so a clang-only warning never breaks
# `make test`.
add_compile_options(-Wno-error)
