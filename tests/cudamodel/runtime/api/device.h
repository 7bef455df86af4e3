/* SPDX-License-Identifier: MIT */
/*
 * device.h - the device and what it answers: counts, versions, attributes
 * and properties (the cuda* queries, device.c), and which memory locations
 * name it or the host.
 */
#ifndef DAO_CUDAMODEL_API_DEVICE_H
#define DAO_CUDAMODEL_API_DEVICE_H

#include <cuda_runtime.h>
#include <stdbool.h>

/* Whether loc names the device, or (host_allowed) the host. */
bool cm_location_valid(struct cudaMemLocation loc, bool host_allowed);

#endif /* DAO_CUDAMODEL_API_DEVICE_H */
