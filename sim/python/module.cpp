// The `fleetsim._core` extension module: api.h's functions with the GIL released while they
// simulate, fleetsim's InputError as the Python exception fleetsim.InputError (attributes file,
// pointer, message), std::bad_alloc as MemoryError naming the limits, InternalError and other C++
// exceptions as RuntimeError. The only file that includes pybind11; the Python side (dicts, paths,
// json.loads, to_pandas) is fleetsim/__init__.py.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <new>
#include <tuple>

#include "core/error.h"
#include "python/api.h"

namespace py = pybind11;
using fleetsim::python::Limits;
using fleetsim::python::Source;

namespace {

Source make_source(bool is_path, std::string name, std::string text) {
  Source s;
  s.is_path = is_path;
  s.name = std::move(name);
  s.text = std::move(text);
  return s;
}

// (max_gpus, max_passes, max_flows, max_run_events, max_sim_memory, max_points) from
// fleetsim._limits.
using LimitArgs = std::tuple<int, int64_t, int64_t, int64_t, int64_t, int64_t>;
Limits make_limits(const LimitArgs& a) {
  Limits l;
  std::tie(l.max_gpus, l.max_passes, l.max_flows, l.max_run_events, l.max_sim_memory,
           l.max_points) = a;
  return l;
}

// What MemoryError says when std::bad_alloc reaches Python (the CLI's out-of-memory message).
constexpr const char* kOutOfMemory =
    "fleetsim ran out of memory: the simulation needed more than the process could get. Its "
    "size is bounded by the keyword arguments max_gpus, max_passes, max_flows, max_run_events "
    "and max_sim_memory (the last is an estimate): lower the one you raised";

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "fleetsim's study layer (use the fleetsim package, not this module)";
  static py::exception<fleetsim::InputError> input_error(m, "InputError", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const fleetsim::InputError& e) {
      py::object err = py::reinterpret_borrow<py::object>(input_error)(py::str(e.what()));
      err.attr("file") = py::str(e.file());
      err.attr("pointer") = py::str(e.pointer());
      err.attr("message") = py::str(e.message());
      PyErr_SetObject(input_error.ptr(), err.ptr());
    } catch (const std::bad_alloc&) {
      PyErr_SetString(PyExc_MemoryError, kOutOfMemory);
    }
  });
  using release = py::call_guard<py::gil_scoped_release>;
  m.def(
      "run_json",
      [](bool is_path, std::string name, std::string text, std::optional<uint64_t> seed,
         int threads, const LimitArgs& limits) {
        return fleetsim::python::run_report_json(
            make_source(is_path, std::move(name), std::move(text)), seed, threads,
            make_limits(limits));
      },
      release());
  m.def(
      "memory_json",
      [](bool is_path, std::string name, std::string text, const LimitArgs& limits) {
        return fleetsim::python::memory_report_json(
            make_source(is_path, std::move(name), std::move(text)), make_limits(limits));
      },
      release());
  m.def("validate_json", &fleetsim::python::validate_report_json, release());
  m.def(
      "sweep_json",
      [](bool is_path, std::string name, std::string text, int threads, const LimitArgs& limits) {
        return fleetsim::python::sweep_results_json(
            make_source(is_path, std::move(name), std::move(text)), threads, make_limits(limits));
      },
      release());
  m.attr("default_max_gpus") = Limits{}.max_gpus;
  m.attr("default_max_passes") = Limits{}.max_passes;
  m.attr("default_max_flows") = Limits{}.max_flows;
  m.attr("default_max_run_events") = Limits{}.max_run_events;
  m.attr("default_max_sim_memory") = Limits{}.max_sim_memory;
  m.attr("default_max_points") = Limits{}.max_points;
}
