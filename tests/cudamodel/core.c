/* SPDX-License-Identifier: MIT */
/*
 * core.c - the model's state, clocks, reports, errors and the device
 * queries: one device (DAO_CUDAMODEL_DEVICES, default 1) of
 * DAO_CUDAMODEL_MEM bytes (default 1 GiB, suffixes K M G), with
 * concurrent managed access, as on Hopper. DAO_CUDAMODEL_DRIVER=0 plays a
 * machine without a driver.
 */
#include <dlfcn.h>
#include <execinfo.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model.h"

struct cm_state model = { .lock = PTHREAD_MUTEX_INITIALIZER };

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static pthread_key_t host_key;
static __thread int host_actor = -1;
/* In TLS, not allocated: a host fault may need it inside the signal
 * handler. */
static __thread struct cm_vc host_clock_storage;
static __thread struct cm_vc *host_clock;
static __thread cudaError_t last_error;
static __thread int current_device;
/* Counted outside the lock: a refusal may happen with or without it. */
static uint64_t misuses;


static uint64_t env_bytes(const char *name, uint64_t dflt)
{
	const char *v = getenv(name);
	char *end;
	uint64_t x;

	if (!v || !*v)
		return dflt;
	x = strtoull(v, &end, 0);
	switch (*end) {
	case 'k': case 'K': x <<= 10; break;
	case 'm': case 'M': x <<= 20; break;
	case 'g': case 'G': x <<= 30; break;
	case 0: break;
	default:
		cm_fail("%s=%s: not a size", name, v);
	}
	return x;
}

static void host_gone(void *p)
{
	cm_lock();
	cm_actor_free(host_actor);
	cm_unlock();
}

static void check_at_exit(void)
{
	/* Refused calls are the real runtime's errors too, but a test that
	 * makes one by mistake must not pass: DAO_CUDAMODEL_MISUSE_OK=1 is
	 * for tests that make them on purpose. */
	const char *ok = getenv("DAO_CUDAMODEL_MISUSE_OK");

	uint64_t n = __atomic_load_n(&misuses, __ATOMIC_RELAXED);
	const char *stats = getenv("DAO_CUDAMODEL_STATS");

	if (stats && *stats == '1') {
		struct dao_cudamodel_counters c;

		dao_cudamodel_counters(&c);
		fprintf(stderr,
			"cudamodel: card %llu, peak %llu (managed %llu); pages: %llu prefetched, "
			"%llu discarded, %llu device faults, %llu host faults, %llu fault "
			"migrations, %llu remote, %llu evicted, %llu host populations; %llu "
			"refused calls\n",
			(unsigned long long)c.card_bytes, (unsigned long long)c.device_bytes_peak,
			(unsigned long long)c.managed_device_peak,
			(unsigned long long)c.prefetch_migrations, (unsigned long long)c.discards,
			(unsigned long long)c.device_faults, (unsigned long long)c.host_faults,
			(unsigned long long)c.fault_migrations, (unsigned long long)c.remote_accesses,
			(unsigned long long)c.evictions, (unsigned long long)c.host_populations,
			(unsigned long long)c.misuses);
	}

	cm_um_write();
	if (n && !(ok && *ok == '1')) {
		fprintf(stderr, "cudamodel: %llu refused call(s): failing the process\n",
			(unsigned long long)n);
		_exit(CM_EXIT);
	}
}

static void init(void)
{
	const char *d = getenv("DAO_CUDAMODEL_DEVICES"), *drv = getenv("DAO_CUDAMODEL_DRIVER");

	model.devices = d && *d ? atoi(d) : 1;
	model.no_driver = drv && !strcmp(drv, "0");
	model.no_pin = getenv("DAO_CUDAMODEL_PIN") && !strcmp(getenv("DAO_CUDAMODEL_PIN"), "0");
	model.no_discard =
		getenv("DAO_CUDAMODEL_DISCARD") && !strcmp(getenv("DAO_CUDAMODEL_DISCARD"), "0");
	model.no_query = getenv("DAO_CUDAMODEL_QUERY") && !strcmp(getenv("DAO_CUDAMODEL_QUERY"), "0");
	model.card = env_bytes("DAO_CUDAMODEL_MEM", 1ull << 30);
	model.n.card_bytes = model.card;
	pthread_key_create(&host_key, host_gone);
	cm_mem_init();
	cm_um_init();
	cm_streams_init();
	atexit(check_at_exit);
	model.ready = true;
}

void cm_init(void)
{
	pthread_once(&init_once, init);
}

void cm_lock(void)
{
	cm_init();
	pthread_mutex_lock(&model.lock);
}

void cm_unlock(void)
{
	pthread_mutex_unlock(&model.lock);
}

int cm_actor_new(void)
{
	for (int a = 0; a < CM_ACTORS; a++)
		if (!model.actor_used[a]) {
			model.actor_used[a] = true;
			model.clock[a]++;
			return a;
		}
	cm_fail("more than %d threads and streams at once", CM_ACTORS);
}

/* A slot is reused with its clock going on from where it was: what the old
 * actor did counts as ordered before the new one (a stream destroyed, a
 * thread gone: both finished). */
void cm_actor_free(int a)
{
	if (a >= 0) {
		model.actor_used[a] = false;
		model.retired[a] = model.clock[a];
	}
}

struct cm_vc *cm_host_vc(int *actor)
{
	if (host_actor < 0) {
		host_clock = &host_clock_storage;
		host_actor = cm_actor_new();
		host_clock->c[host_actor] = model.clock[host_actor];
		pthread_setspecific(host_key, host_clock); /* for host_gone */
	}
	*actor = host_actor;
	return host_clock;
}

void cm_vc_join(struct cm_vc *a, const struct cm_vc *b)
{
	for (int i = 0; i < CM_ACTORS; i++)
		if (b->c[i] > a->c[i])
			a->c[i] = b->c[i];
}

void cm_site_here(struct cm_site *s)
{
	void *pc[CM_FRAMES + 2];
	int n = backtrace(pc, CM_FRAMES + 2);

	/* Drop this function and the model's entry point. */
	s->n = n > 2 ? n - 2 : 0;
	memcpy(s->pc, pc + 2, (size_t)s->n * sizeof(void *));
}

void cm_site_print(const char *what, const struct cm_site *s)
{
	fprintf(stderr, "cudamodel:   %s\n", what);
	for (int i = 0; i < s->n; i++) {
		Dl_info info;

		if (dladdr(s->pc[i], &info) && info.dli_fname) {
			if (info.dli_sname)
				fprintf(stderr, "cudamodel:     #%d %s (%s+0x%lx)\n", i, info.dli_sname,
					info.dli_fname,
					(unsigned long)((char *)s->pc[i] - (char *)info.dli_fbase));
			else
				fprintf(stderr, "cudamodel:     #%d %s+0x%lx\n", i, info.dli_fname,
					(unsigned long)((char *)s->pc[i] - (char *)info.dli_fbase));
		} else {
			fprintf(stderr, "cudamodel:     #%d %p\n", i, s->pc[i]);
		}
	}
}

void cm_fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "cudamodel: ERROR: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	fflush(stderr);
	_exit(CM_EXIT);
}

cudaError_t cm_ret(cudaError_t err)
{
	if (err != cudaSuccess)
		last_error = err;
	return err;
}

cudaError_t cm_vmisuse(const char *call, cudaError_t err, const struct cm_site *site,
		       const char *fmt, va_list ap)
{
	__atomic_add_fetch(&misuses, 1, __ATOMIC_RELAXED);
	fprintf(stderr, "cudamodel: %s refused (%s): ", call, cudaGetErrorName(err));
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	cm_site_print("called from", site);
	return cm_ret(err);
}

cudaError_t cm_misuse(const char *call, cudaError_t err, const char *fmt, ...)
{
	struct cm_site site;
	va_list ap;

	cm_site_here(&site);
	va_start(ap, fmt);
	err = cm_vmisuse(call, err, &site, fmt, ap);
	va_end(ap);
	return err;
}

/* Whether a driver and a device answer; the error when not. */
static cudaError_t device_check(void)
{
	cm_init();
	if (model.no_driver)
		return cudaErrorInsufficientDriver;
	if (model.devices <= 0)
		return cudaErrorNoDevice;
	return cudaSuccess;
}

cudaError_t cudaGetDeviceCount(int *count)
{
	cudaError_t err = device_check();

	if (!count)
		return cm_misuse("cudaGetDeviceCount", cudaErrorInvalidValue, "count is NULL");
	*count = err == cudaSuccess ? model.devices : 0;
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
	if (device < 0 || device >= model.devices)
		return cm_misuse("cudaSetDevice", cudaErrorInvalidDevice, "device %d of %d", device,
				 model.devices);
	current_device = device;
	return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int *version)
{
	cm_init();
	if (!version)
		return cm_misuse("cudaDriverGetVersion", cudaErrorInvalidValue, "NULL");
	*version = model.no_driver ? 0 : CUDART_VERSION;
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
	if (device < 0 || device >= model.devices)
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
	if (device < 0 || device >= model.devices)
		return cm_misuse("cudaGetDeviceProperties", cudaErrorInvalidDevice, "device %d",
				 device);
	memset(prop, 0, sizeof(*prop));
	snprintf(prop->name, sizeof(prop->name), "cudamodel (CPU model of a CUDA device)");
	prop->totalGlobalMem = model.card;
	prop->major = 9;
	prop->minor = 0;
	prop->managedMemory = 1;
	prop->concurrentManagedAccess = 1;
	prop->unifiedAddressing = 1;
	prop->asyncEngineCount = 2;
	return cudaSuccess;
}

cudaError_t cudaGetLastError(void)
{
	cudaError_t e = last_error;

	last_error = cudaSuccess;
	return e;
}

cudaError_t cudaPeekAtLastError(void)
{
	return last_error;
}

static const struct {
	cudaError_t err;
	const char *name, *text;
} errors[] = {
	{ cudaSuccess, "cudaSuccess", "no error" },
	{ cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument" },
	{ cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory" },
	{ cudaErrorInvalidDevicePointer, "cudaErrorInvalidDevicePointer",
	  "invalid device pointer" },
	{ cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection",
	  "invalid copy direction for memcpy" },
	{ cudaErrorInsufficientDriver, "cudaErrorInsufficientDriver",
	  "CUDA driver version is insufficient for CUDA runtime version" },
	{ cudaErrorCallRequiresNewerDriver, "cudaErrorCallRequiresNewerDriver",
	  "API call is not supported in the installed CUDA driver" },
	{ cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected" },
	{ cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal" },
	{ cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle",
	  "invalid resource handle" },
	{ cudaErrorNotReady, "cudaErrorNotReady", "device not ready" },
	{ cudaErrorHostMemoryAlreadyRegistered, "cudaErrorHostMemoryAlreadyRegistered",
	  "part or all of the requested memory range is already mapped" },
	{ cudaErrorHostMemoryNotRegistered, "cudaErrorHostMemoryNotRegistered",
	  "pointer does not correspond to a registered memory region" },
	{ cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported" },
};

const char *cudaGetErrorName(cudaError_t err)
{
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].err == err)
			return errors[i].name;
	return "cudaErrorUnknown";
}

const char *cudaGetErrorString(cudaError_t err)
{
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].err == err)
			return errors[i].text;
	return "unrecognized error code";
}

void dao_cudamodel_counters(struct dao_cudamodel_counters *out)
{
	cm_lock();
	*out = model.n;
	cm_unlock();
	out->misuses = __atomic_load_n(&misuses, __ATOMIC_RELAXED);
}

void dao_cudamodel_reset_peaks(void)
{
	cm_lock();
	model.n.device_bytes_peak = model.n.device_bytes;
	model.n.managed_device_peak = model.n.managed_device_bytes;
	cm_unlock();
}
