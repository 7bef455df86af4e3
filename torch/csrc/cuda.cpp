// SPDX-License-Identifier: MIT
/*
 * cuda.cpp - on the CUDA backends a kernel runs on the stream libdao made
 * its operands ready on (dao_kernel_args.stream): PyTorch's CUDA operators
 * launch on the current stream, so that stream is made current while the
 * kernel runs, and the previous one restored after. Built only against a
 * PyTorch with CUDA (torch.mk: DAO_TORCH_CUDA).
 */
#include "dao_torch.h"

#ifdef DAO_TORCH_CUDA
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

namespace dao_torch {

CudaStreamScope::CudaStreamScope(void *stream) : saved{}
{
	/* One device: libdao's context runs on device 0 of the process. */
	c10::cuda::CUDAStream s =
		c10::cuda::getStreamFromExternal(static_cast<cudaStream_t>(stream), static_cast<c10::DeviceIndex>(0));
	saved[0] = new c10::cuda::CUDAStreamGuard(s);
}

CudaStreamScope::~CudaStreamScope()
{
	delete static_cast<c10::cuda::CUDAStreamGuard *>(saved[0]);
}

} // namespace dao_torch
#endif
