// The Python module dsgd_torch: importing it registers the process group "dsgd" with
// torch.distributed, so that init_process_group("dsgd", ...) (or env:// under torchrun or
// mp.spawn) puts the program's processes on dsgd's simulated network.
#include <pybind11/chrono.h>
#include <pybind11/pybind11.h>
#include <torch/csrc/utils/pybind.h>

#include "pytorch/process_group.h"

namespace py = pybind11;
using dsgd::pytorch::ProcessGroupDsgd;

namespace {

// torch.distributed's creator: (store, rank, world_size, timeout) -> the process group. It
// waits for every rank, so other Python threads run meanwhile.
c10::intrusive_ptr<ProcessGroupDsgd> create(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                            int size, std::chrono::milliseconds timeout) {
  py::gil_scoped_release unlocked;
  return c10::make_intrusive<ProcessGroupDsgd>(store, rank, size, timeout);
}

}  // namespace

PYBIND11_MODULE(dsgd_torch, m) {
  m.doc() = "dsgd's simulated network as a torch.distributed backend named \"dsgd\"";
  py::object dist = py::module_::import("torch.distributed");
  py::class_<ProcessGroupDsgd, c10d::ProcessGroup, c10::intrusive_ptr<ProcessGroupDsgd>>(
      m, "ProcessGroupDsgd")
      .def(py::init(&create), py::arg("store"), py::arg("rank"), py::arg("size"),
           py::arg("timeout"));
  m.def("_create_process_group", &create, py::arg("store"), py::arg("rank"), py::arg("size"),
        py::arg("timeout"));
  dist.attr("Backend").attr("register_backend")("dsgd", m.attr("_create_process_group"));
}
