/* SPDX-License-Identifier: MIT */
/*
 * module.cpp - dao_torch._C, the Python module (plain CPython API: the
 * operators themselves reach the device through PyTorch's dispatcher).
 * Importing it registers the device; dao_torch/__init__.py wraps these
 * functions.
 */
#include <Python.h>

#include "dao_torch.h"

#include <functional>
#include <string>

namespace {

using namespace dao_torch;

/* Run f with the GIL released (it may wait for the executor); a C++
 * exception becomes a RuntimeError (MemoryError for an allocation). */
bool call_unlocked(const std::function<void()> &f)
{
	std::string err;
	bool oom = false;
	Py_BEGIN_ALLOW_THREADS
	try {
		f();
	} catch (const c10::OutOfMemoryError &e) {
		err = e.what_without_backtrace();
		oom = true;
	} catch (const c10::Error &e) {
		err = e.what_without_backtrace();
	} catch (const std::exception &e) {
		err = e.what();
	}
	Py_END_ALLOW_THREADS
	if (err.empty())
		return true;
	PyErr_SetString(oom ? PyExc_MemoryError : PyExc_RuntimeError, err.c_str());
	return false;
}

std::string str_or_empty(const char *s)
{
	return s ? std::string(s) : std::string();
}

PyObject *py_open(PyObject *, PyObject *args, PyObject *kw)
{
	static const char *names[] = {"backend", "budget", "policy", "lookahead", "trace", "job",
				      "deterministic", "check", "host_budget", nullptr};
	const char *backend = nullptr, *budget = nullptr, *policy = nullptr, *trace = nullptr,
		   *job = nullptr, *host_budget = nullptr;
	unsigned int lookahead = 0;
	int deterministic = 0, check = -1;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "|zzzIzzpiz", const_cast<char **>(names), &backend,
					 &budget, &policy, &lookahead, &trace, &job, &deterministic,
					 &check, &host_budget))
		return nullptr;
	OpenOptions o;
	o.backend = str_or_empty(backend);
	o.budget = str_or_empty(budget);
	o.policy = str_or_empty(policy);
	o.trace = str_or_empty(trace);
	o.job = str_or_empty(job);
	o.host_budget = str_or_empty(host_budget);
	o.lookahead = lookahead;
	o.deterministic = deterministic != 0;
	o.check = check;
	if (!call_unlocked([&] { open_device(o); }))
		return nullptr;
	Py_RETURN_NONE;
}

PyObject *py_close(PyObject *, PyObject *args, PyObject *kw)
{
	static const char *names[] = {"exiting", nullptr};
	int exiting = 0;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "|p", const_cast<char **>(names), &exiting))
		return nullptr;
	uint64_t leaked = 0;
	if (!call_unlocked([&] { leaked = close_device(exiting != 0); }))
		return nullptr;
	return PyLong_FromUnsignedLongLong(leaked);
}

PyObject *py_synchronize(PyObject *, PyObject *)
{
	if (!call_unlocked([] { sync_device(); }))
		return nullptr;
	Py_RETURN_NONE;
}

PyObject *py_iteration(PyObject *, PyObject *)
{
	if (!call_unlocked([] { check(dao_iteration(context()), "marking an iteration"); }))
		return nullptr;
	Py_RETURN_NONE;
}

PyObject *py_is_open(PyObject *, PyObject *)
{
	return PyBool_FromLong(device_is_open());
}

PyObject *py_failure(PyObject *, PyObject *)
{
	return PyUnicode_FromString(failure().c_str());
}

bool put(PyObject *d, const char *k, PyObject *v)
{
	if (!v)
		return false;
	int rc = PyDict_SetItemString(d, k, v);
	Py_DECREF(v);
	return rc == 0;
}

bool put_u64(PyObject *d, const char *k, uint64_t v)
{
	return put(d, k, PyLong_FromUnsignedLongLong(v));
}

PyObject *map_dict(const std::map<std::string, uint64_t> &m)
{
	PyObject *d = PyDict_New();
	if (!d)
		return nullptr;
	for (const auto &p : m) {
		if (!put_u64(d, p.first.c_str(), p.second)) {
			Py_DECREF(d);
			return nullptr;
		}
	}
	return d;
}

PyObject *py_stats(PyObject *, PyObject *)
{
	dao_stats ds{};
	bool have_dao = false;
	if (device_is_open()) {
		dao_status st = dao_stats_get(context(), &ds);
		if (st != DAO_OK) {
			PyErr_Format(PyExc_RuntimeError, "dao: dao_stats_get: %s", dao_strerror(st));
			return nullptr;
		}
		have_dao = true;
	}
	Stats &s = stats();
	PyObject *d = PyDict_New();
	if (!d)
		return nullptr;
	bool ok = true;
#define U(name, value) ok = ok && put_u64(d, name, value)
	if (have_dao) {
		U("h2d_bytes", ds.h2d_bytes);
		U("d2h_bytes", ds.d2h_bytes);
		U("fetches", ds.fetches);
		U("prefetches", ds.prefetches);
		U("writebacks", ds.writebacks);
		U("evictions", ds.evictions);
		U("drops", ds.drops);
		U("stalls", ds.stalls);
		U("stall_ns", ds.stall_ns);
		U("kernels_run", ds.kernels);
		U("device_bytes", ds.device_bytes);
		U("peak_device_bytes", ds.peak_device_bytes);
		U("host_bytes", ds.host_bytes);
		U("live_buffers", ds.live_buffers);
		U("budget_bytes", ds.budget_bytes);
		U("host_budget_bytes", ds.host_budget_bytes);
		U("pinned_bytes", ds.pinned_bytes);
	}
	U("ops", s.ops.load());
	U("kernels", s.kernels.load());
	U("views", s.views.load());
	U("copy_outputs", s.copy_outputs.load());
	U("rng_replays", s.rng_replays.load());
	U("resizes", s.resizes.load());
	U("copies_in", s.copies_in.load());
	U("bytes_in", s.bytes_in.load());
	U("copies_out", s.copies_out.load());
	U("bytes_out", s.bytes_out.load());
	U("submit_ns", s.submit_ns.load());
	U("meta_runs", s.meta_runs.load());
	U("meta_hits", s.meta_hits.load());
	U("waits", s.waits.load());
	U("wait_ns", s.wait_ns.load());
	U("storages", s.storages.load());
	U("launches_queued", launches_queued());
#undef U
	{
		std::lock_guard<std::mutex> g(s.mu);
		ok = ok && put(d, "wait_reasons", map_dict(s.wait_reasons));
		ok = ok && put(d, "copied_ops", map_dict(copied_ops()));
	}
	if (!ok) {
		Py_DECREF(d);
		return nullptr;
	}
	return d;
}

PyObject *py_info(PyObject *, PyObject *)
{
	if (!device_is_open())
		Py_RETURN_NONE;
	dao_info info;
	dao_status st = dao_info_get(context(), &info);
	if (st != DAO_OK) {
		PyErr_Format(PyExc_RuntimeError, "dao: dao_info_get: %s", dao_strerror(st));
		return nullptr;
	}
	PyObject *d = PyDict_New();
	if (!d)
		return nullptr;
	bool ok = put(d, "backend", PyUnicode_FromString(info.backend_name)) &&
		  put(d, "policy", PyUnicode_FromString(info.policy_name)) &&
		  put_u64(d, "lookahead", info.lookahead) && put_u64(d, "device_budget", info.device_budget) &&
		  put_u64(d, "host_budget", info.host_budget) && put_u64(d, "device_memory", info.device_memory) &&
		  put(d, "deterministic", PyBool_FromLong((info.flags & DAO_CONFIG_DETERMINISTIC) != 0)) &&
		  put(d, "check", PyBool_FromLong(checking())) &&
		  put(d, "kernels_on_cuda", PyBool_FromLong(kernels_on_cuda()));
	if (!ok) {
		Py_DECREF(d);
		return nullptr;
	}
	return d;
}

PyMethodDef methods[] = {
	{"open", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(py_open)),
	 METH_VARARGS | METH_KEYWORDS, "Open the dao device."},
	{"close", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(py_close)),
	 METH_VARARGS | METH_KEYWORDS, "Drain and close the dao device; returns the handles leaked."},
	{"synchronize", py_synchronize, METH_NOARGS, "Wait for every queued kernel."},
	{"iteration", py_iteration, METH_NOARGS, "Mark an iteration boundary."},
	{"is_open", py_is_open, METH_NOARGS, "Whether the device is open."},
	{"failure", py_failure, METH_NOARGS, "The first kernel failure, or ''."},
	{"stats", py_stats, METH_NOARGS, "Counters of libdao and of the torch layer."},
	{"info", py_info, METH_NOARGS, "What the open device runs with."},
	{nullptr, nullptr, 0, nullptr},
};

PyModuleDef module = {PyModuleDef_HEAD_INIT, "dao_torch._C", "The dao PyTorch device.", -1, methods,
		      nullptr, nullptr, nullptr, nullptr};

} // namespace

namespace dao_torch {

void forget_python_error()
{
	if (!Py_IsInitialized())
		return;
	PyGILState_STATE g = PyGILState_Ensure();
	PyErr_Clear();
	PyGILState_Release(g);
}

} // namespace dao_torch

PyMODINIT_FUNC PyInit__C(void)
{
	return PyModule_Create(&module);
}
