/* SPDX-License-Identifier: MIT */
/*
 * device.c - the device and what it answers (device.h): DAO_CUDAMODEL_DEVICES
 * devices (default 1) of DAO_CUDAMODEL_MEM bytes each, with concurrent
 * managed access, as on Hopper; DAO_CUDAMODEL_DRIVER=0 plays a machine
 * without a driver.
 */
#include <stdio.h>
#include <string.h>

#include "api/device.h"
#include "api/init.h"
#include "base/errors.h"
#include "base/report.h"
#include "state/card.h"

static __thread int current_device;

/* Whether a driver and a device answer; the error when not. */
static cudaError_t device_check(void)
{
	cm_init();
	if (cm_config.no_driver)
		return cudaErrorInsufficientDriver;
	if (cm_config.devices <= 0)
		return cudaErrorNoDevice;
	return cudaSuccess;
}

cudaError_t cudaGetDeviceCount(int *count)
{
	cudaError_t err = device_check();

	if (!count)
		return cm_misuse("cudaGetDeviceCount", cudaErrorInvalidValue, "count is NULL");
	*count = err == cudaSuccess ? cm_config.devices : 0;
	return cm_ret(err);
}

cudaError_t cudaGetDevice(int *device)
{
	cudaError_t err = device_check();

	if (err != cudaSuccess)
		return cm_ret(err);
	if (!device)
		return cm_misuse("cudaGetDevice", cudaErrorInvalidValue, "device is NULL");
	*device = current_device;
	return cudaSuccess;
}

cudaError_t cudaSetDevice(int device)
{
	cudaError_t err = device_check();

	if (err != cudaSuccess)
		return cm_ret(err);
	if (device < 0 || device >= cm_config.devices)
		return cm_misuse("cudaSetDevice", cudaErrorInvalidDevice, "device %d of %d", device,
				 cm_config.devices);
	current_device = device;
	return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int *version)
{
	cm_init();
	if (!version)
		return cm_misuse("cudaDriverGetVersion", cudaErrorInvalidValue, "NULL");
	*version = cm_config.no_driver ? 0 : CUDART_VERSION;
	return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int *version)
{
	if (!version)
		return cm_misuse("cudaRuntimeGetVersion", cudaErrorInvalidValue, "NULL");
	*version = CUDART_VERSION;
	return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
	cudaError_t err = device_check();

	if (err != cudaSuccess)
		return cm_ret(err);
	if (!value)
		return cm_misuse("cudaDeviceGetAttribute", cudaErrorInvalidValue, "value is NULL");
	if (device < 0 || device >= cm_config.devices)
		return cm_misuse("cudaDeviceGetAttribute", cudaErrorInvalidDevice, "device %d",
				 device);
	switch (attr) {
	case cudaDevAttrConcurrentManagedAccess:
	case cudaDevAttrManagedMemory:
	case cudaDevAttrPageableMemoryAccess:
	case cudaDevAttrUnifiedAddressing:
		*value = attr != cudaDevAttrPageableMemoryAccess;
		return cudaSuccess;
	case cudaDevAttrComputeCapabilityMajor:
		*value = 9;
		return cudaSuccess;
	case cudaDevAttrComputeCapabilityMinor:
		*value = 0;
		return cudaSuccess;
	case cudaDevAttrAsyncEngineCount:
		*value = 2;
		return cudaSuccess;
	default:
		return cm_misuse("cudaDeviceGetAttribute", cudaErrorInvalidValue,
				 "attribute %d is not modeled", (int)attr);
	}
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
	cudaError_t err = device_check();

	if (err != cudaSuccess)
		return cm_ret(err);
	if (!prop)
		return cm_misuse("cudaGetDeviceProperties", cudaErrorInvalidValue, "NULL");
	if (device < 0 || device >= cm_config.devices)
		return cm_misuse("cudaGetDeviceProperties", cudaErrorInvalidDevice, "device %d",
				 device);
	memset(prop, 0, sizeof(*prop));
	snprintf(prop->name, sizeof(prop->name), "cudamodel (CPU model of a CUDA device)");
	prop->totalGlobalMem = cm_card.size;
	prop->major = 9;
	prop->minor = 0;
	prop->managedMemory = 1;
	prop->concurrentManagedAccess = 1;
	prop->unifiedAddressing = 1;
	prop->asyncEngineCount = 2;
	return cudaSuccess;
}

bool cm_location_valid(struct cudaMemLocation loc, bool host_allowed)
{
	switch (loc.type) {
	case cudaMemLocationTypeDevice:
		return loc.id >= 0 && loc.id < cm_config.devices;
	case cudaMemLocationTypeHost:
	case cudaMemLocationTypeHostNumaCurrent:
		return host_allowed;
	case cudaMemLocationTypeHostNuma:
		return host_allowed && loc.id == 0;
	default:
		return false;
	}
}
