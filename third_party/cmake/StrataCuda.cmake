# Decides whether the CUDA backend is built. STRATA_WITH_CUDA=AUTO (default) builds it when nvcc,
# cuBLAS(Lt) and cuDNN are all found, and says in one line why not otherwise; ON makes a missing
# piece a configure error; OFF skips the search. NCCL is optional on top (MirroredStrategy over
# several GPUs needs it).
#
# Sets STRATA_CUDA_ENABLED / STRATA_NCCL_ENABLED (ON/OFF). GPU code targets sm_90 (H100/H200)
# as machine code plus compute_90 PTX, which the driver JIT-compiles for newer GPUs.
set(STRATA_WITH_CUDA AUTO CACHE STRING "Build the CUDA backend: AUTO, ON or OFF")
set_property(CACHE STRATA_WITH_CUDA PROPERTY STRINGS AUTO ON OFF)
set(STRATA_CUDA_ENABLED OFF)
set(STRATA_NCCL_ENABLED OFF)

function(_strata_cuda_unavailable why)
  if(STRATA_WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "STRATA_WITH_CUDA=ON but ${why}")
  endif()
  message(STATUS "CUDA backend: OFF (${why}; CPU only)")
endfunction()

if(STRATA_WITH_CUDA STREQUAL "OFF")
  message(STATUS "CUDA backend: OFF (STRATA_WITH_CUDA=OFF)")
  return()
endif()

# nvcc is usually not on PATH: look where the CUDA packages install it.
if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX})
  find_program(_strata_nvcc nvcc HINTS $ENV{CUDA_HOME}/bin $ENV{CUDA_PATH}/bin /usr/local/cuda/bin)
  if(_strata_nvcc)
    set(CMAKE_CUDA_COMPILER ${_strata_nvcc} CACHE FILEPATH "CUDA compiler")
  endif()
endif()
include(CheckLanguage)
check_language(CUDA)
if(NOT CMAKE_CUDA_COMPILER)
  _strata_cuda_unavailable("no CUDA compiler (nvcc) was found; set CUDACXX or CMAKE_CUDA_COMPILER")
  return()
endif()

if(NOT CMAKE_CUDA_ARCHITECTURES)
  # "90" = sm_90 machine code + compute_90 PTX for GPUs newer than Hopper.
  set(CMAKE_CUDA_ARCHITECTURES 90)
endif()
enable_language(CUDA)
find_package(CUDAToolkit)
if(NOT CUDAToolkit_FOUND OR NOT TARGET CUDA::cublasLt OR NOT TARGET CUDA::cublas)
  _strata_cuda_unavailable("the CUDA toolkit's cuBLAS/cuBLASLt were not found")
  return()
endif()
find_package(CUDNN)
if(NOT CUDNN_FOUND)
  _strata_cuda_unavailable("cuDNN was not found; set CUDNN_ROOT")
  return()
endif()
find_package(NCCL)
if(NCCL_FOUND)
  set(STRATA_NCCL_ENABLED ON)
endif()
set(STRATA_CUDA_ENABLED ON)
# CMake 3.25 does not know nvcc's C++20 flag; the headers .cu files include are C++17-clean.
set(CMAKE_CUDA_STANDARD 17)
set(CMAKE_CUDA_STANDARD_REQUIRED ON)
if(CCACHE_PROGRAM AND NOT CMAKE_CUDA_COMPILER_LAUNCHER)
  set(CMAKE_CUDA_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
endif()
message(STATUS "CUDA backend: ON (CUDA ${CUDAToolkit_VERSION}, cuDNN ${CUDNN_VERSION}, "
               "NCCL ${NCCL_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES})")
