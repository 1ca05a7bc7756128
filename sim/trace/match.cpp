// Matching a trace's kernels to fleetsim's kernel classes (trace_internal.h): launch stacks by
// time nesting per CPU thread, then a class per launching op instance from the innermost op that
// names one (GEMM, grouped GEMM, attention, RMSNorm, SwiGLU, elementwise) or from the kernel name
// (NCCL, device copies). Shapes follow the aten signatures: mm(a[M,K], b[K,N]), addmm(bias, a, b),
// bmm(a[B,M,K], b[B,K,N]), baddbmm(c, a, b), linear(x[...,K], w[N,K]), matmul(a[...,M,K], b[K,N]),
// _scaled_mm(a[M,K], b[K,N], ...); SDPA query [B, H, S, D].
#include <map>
#include <tuple>

#include "trace/trace_internal.h"

namespace fleetsim::trace_internal {
namespace {

double prod(const std::vector<double>& v, size_t from, size_t to) {
  double p = 1;
  for (size_t i = from; i < to && i < v.size(); ++i)
    p *= v[i];
  return p;
}

std::string fleetsim_dtype(const std::string& t) {
  if (t == "c10::BFloat16") return "bf16";
  if (t == "float") return "fp32";
  if (t == "c10::Half") return "fp16";
  if (t == "c10::Float8_e4m3fn") return "fp8";
  return t.empty() ? "unknown" : t;
}

double dtype_size(const std::string& d) {
  if (d == "fp32" || d == "Float") return 4;
  if (d == "fp8" || d == "c10::Float8_e4m3fn" || d == "Float8_e4m3fn") return 1;
  return 2;  // bf16, fp16, and the trace's BFloat16 / Half spellings
}

bool is_gemm_op(const std::string& n) {
  for (const char* g : {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul",
                        "aten::linear", "aten::_scaled_mm"})
    if (n == g) return true;
  return false;
}

// batch, m, n, k of a GEMM op; false when the dims do not fit its signature.
bool gemm_shape(const Span& op, double* b, double* m, double* n, double* k) {
  const Dims& d = op.dims;
  const std::string& o = op.name;
  auto two = [&](const std::vector<double>& a, const std::vector<double>& w) {
    if (a.size() < 2 || w.size() < 2) return false;
    *b = a.size() == 3 && w.size() == 3 ? a[0] : 1;
    *m = a.size() == 3 && w.size() == 3 ? a[1] : prod(a, 0, a.size() - 1);
    *k = a.back();
    *n = w.back();
    return w[w.size() - 2] == *k;
  };
  if ((o == "aten::mm" || o == "aten::bmm" || o == "aten::_scaled_mm" || o == "aten::matmul") &&
      d.size() >= 2)
    return two(d[0], d[1]);
  if ((o == "aten::addmm" || o == "aten::baddbmm") && d.size() >= 3) return two(d[1], d[2]);
  if (o == "aten::linear" && d.size() >= 2 && d[0].size() >= 2 && d[1].size() == 2) {
    *b = 1;
    *m = prod(d[0], 0, d[0].size() - 1);
    *k = d[0].back();
    *n = d[1][0];
    return d[1][1] == *k;
  }
  return false;
}

struct Instance {
  std::string cls, dtype, op, kernel_name, why;  // why: unmatched reason
  double batch = 1, m = 0, n = 0, k = 0, bytes = 0, group = 0, time = 0;
};

void comm_instance(const Span& kern, const Events& ev, Instance* x) {
  const std::string nl = lower(kern.name);
  CommArgs c = kern.comm;
  if (c.group <= 0 && kern.launch >= 0)
    for (int o : ev.launches[kern.launch].stack)
      if (ev.ops[o].comm.group > 0) c = ev.ops[o].comm;
  const std::string cn = lower(c.name);
  if (contains(nl, "allreduce") || contains(cn, "allreduce") || contains(cn, "all_reduce"))
    x->cls = "nccl_all_reduce";
  else if (contains(nl, "allgather") || contains(cn, "allgather") || contains(cn, "all_gather"))
    x->cls = "nccl_all_gather";
  else if (contains(nl, "reducescatter") || contains(cn, "reduce_scatter") ||
           contains(cn, "reducescatter"))
    x->cls = "nccl_reduce_scatter";
  else if (contains(nl, "alltoall") || contains(cn, "all_to_all") || contains(cn, "alltoall"))
    x->cls = "nccl_all_to_all";
  else
    x->why = "NCCL kernel of a kind fleetsim does not calibrate (" + kern.name.substr(0, 40) + ")";
  if (!x->why.empty()) return;
  if (c.group < 2 || (c.in_nelems <= 0 && c.out_nelems <= 0)) {
    x->why = "NCCL kernel without \"Group size\" / \"In msg nelems\" (PyTorch >= 2.1 records them)";
    return;
  }
  const double e = dtype_size(c.dtype);
  const std::string dl = lower(c.dtype);
  x->dtype = dl == "bfloat16" || dl.empty()     ? "bf16"
             : dl == "float" || dl == "float32" ? "fp32"
             : dl == "half" || dl == "float16"  ? "fp16"
                                                : dl;
  x->group = c.group;
  x->bytes = (x->cls == "nccl_all_gather" ? c.out_nelems : c.in_nelems) * e;  // nccl-tests size
  x->op = "record_param_comms";
}

// RMSNorm / LayerNorm and SwiGLU ops: rows m, width n, bytes moved; false for other ops.
bool norm_or_swiglu(const Span& op, const std::string& nl, const std::string& dt, bool backward,
                    Instance* x) {
  const std::string on = lower(op.name);
  const bool swiglu = contains(on, "swiglu") || contains(nl, "swiglu");
  const bool norm = contains(on, "rms_norm") || contains(on, "layer_norm");
  if (!(swiglu || norm) || op.dims.empty() || op.dims[0].empty()) return false;
  const std::vector<double>& d = op.dims[0];
  const double e = dtype_size(dt);
  x->dtype = dt;
  x->m = prod(d, 0, d.size() - 1);
  x->n = swiglu ? d.back() / 2 : d.back();
  if (swiglu) {
    x->cls = backward ? "elementwise" : "swiglu_fwd";
    x->bytes = 3 * x->m * x->n * e;  // read [m, 2n], write [m, n]
  } else {
    x->cls = !backward && contains(on, "rms_norm") ? "rms_norm_fwd" : "norm_other";
    x->bytes = 2 * x->m * x->n * e + x->n * e;  // read x, write y, read the weight
  }
  return true;
}

// The class of one kernel (or memcpy); x->why set when it cannot be matched.
void classify(const Span& kern, const Events& ev, Instance* x) {
  const std::string nl = lower(kern.name);
  x->kernel_name = kern.name;
  x->time = kern.dur;
  if (kern.is_memcpy) {
    if (contains(nl, "dtod") && kern.bytes > 0) {
      x->cls = "copy_d2d";
      x->dtype = "u8";
      x->bytes = 2 * kern.bytes;  // read + write, as fleetsim-calibrate counts it
    } else {
      x->why = "host <-> device copy (not a kernel class)";
    }
    return;
  }
  if (contains(nl, "nccl")) return comm_instance(kern, ev, x);
  if (kern.launch < 0) {
    x->why = "no launch with its correlation id in the trace";
    return;
  }
  const std::vector<int>& st = ev.launches[kern.launch].stack;
  const bool backward = std::any_of(
      st.begin(), st.end(), [&](int o) { return contains(lower(ev.ops[o].name), "backward"); });
  for (auto it = st.rbegin(); it != st.rend(); ++it) {
    const Span& op = ev.ops[*it];
    const std::string on = lower(op.name);
    const std::string dt = fleetsim_dtype(op.types.empty() ? "" : op.types[0]);
    x->op = op.name;
    if (contains(on, "scaled_dot_product") || contains(on, "flash_attention") ||
        contains(on, "efficient_attention") || contains(on, "cudnn_attention")) {
      x->cls = backward || contains(on, "backward") ? "attention_bwd" : "attention_fwd";
      x->dtype = dt;
      if (!op.dims.empty() && op.dims[0].size() == 4) {
        x->batch = op.dims[0][0];
        x->n = op.dims[0][1];  // heads
        x->m = op.dims[0][2];  // sequence
        x->k = op.dims[0][3];  // head dim
      }
      return;
    }
    if (contains(on, "grouped_mm") || contains(nl, "grouped")) {
      x->cls = "grouped_gemm";
      x->dtype = dt;
      return;
    }
    if (is_gemm_op(op.name)) {
      x->cls = "gemm";
      x->dtype = dt;
      if (op.dims.empty())
        x->why = op.name + " has no Input Dims (record_shapes=False?)";
      else if (!gemm_shape(op, &x->batch, &x->m, &x->n, &x->k))
        x->why = op.name + " Input Dims do not fit its signature";
      return;
    }
    if (norm_or_swiglu(op, nl, dt, backward, x)) return;
  }
  if ((contains(nl, "elementwise") || contains(nl, "vectorized") || contains(nl, "reduce")) &&
      !st.empty()) {
    const Span& op = ev.ops[st.back()];
    x->cls = "elementwise";
    x->op = op.name;
    x->dtype = fleetsim_dtype(op.types.empty() ? "" : op.types[0]);
    double elems = 0, largest = 0;
    for (const auto& d : op.dims) {
      const double p = d.empty() ? 0 : prod(d, 0, d.size());
      elems += p;
      largest = std::max(largest, p);
    }
    x->bytes = (elems + largest) * dtype_size(x->dtype);  // inputs read, one output written
    if (x->bytes <= 0) x->why = "elementwise kernel whose op " + op.name + " has no Input Dims";
    return;
  }
  x->why = st.empty() ? "launched outside any CPU op"
                      : "no kernel class for op " + ev.ops[st.back()].name;
}

}  // namespace

void link_launches(Events& ev) {
  // Per thread: ops sorted by start (longer first on ties), swept with the launches.
  std::map<std::pair<std::string, std::string>, std::vector<int>> ops_by_thread, l_by_thread;
  for (size_t i = 0; i < ev.ops.size(); ++i)
    ops_by_thread[{ev.ops[i].pid, ev.ops[i].tid}].push_back(static_cast<int>(i));
  for (size_t i = 0; i < ev.launches.size(); ++i)
    l_by_thread[{ev.launches[i].pid, ev.launches[i].tid}].push_back(static_cast<int>(i));
  for (auto& [thread, ls] : l_by_thread) {
    std::vector<int>& os = ops_by_thread[thread];
    std::sort(os.begin(), os.end(), [&](int a, int b) {
      return std::tie(ev.ops[a].ts, ev.ops[b].dur) < std::tie(ev.ops[b].ts, ev.ops[a].dur);
    });
    std::sort(ls.begin(), ls.end(),
              [&](int a, int b) { return ev.launches[a].ts < ev.launches[b].ts; });
    std::vector<int> stack;
    size_t oi = 0;
    for (int l : ls) {
      const double t = ev.launches[l].ts;
      for (; oi < os.size() && ev.ops[os[oi]].ts <= t; ++oi) {
        while (!stack.empty() && ev.ops[stack.back()].end() < ev.ops[os[oi]].ts)
          stack.pop_back();
        stack.push_back(os[oi]);
      }
      while (!stack.empty() && ev.ops[stack.back()].end() < t)
        stack.pop_back();
      ev.launches[l].stack = stack;
    }
  }
  std::map<int64_t, int> by_corr;
  for (size_t i = 0; i < ev.launches.size(); ++i)
    if (ev.launches[i].corr >= 0) by_corr[ev.launches[i].corr] = static_cast<int>(i);
  for (Span& k : ev.kernels) {
    const auto it = by_corr.find(k.corr);
    if (it != by_corr.end()) k.launch = it->second;
  }
}

void classify_kernels(const Events& ev, TraceImport* t) {
  // One instance per launching op instance (innermost op of the launch stack) and class.
  std::map<std::pair<int, std::string>, Instance> by_op;
  std::vector<std::pair<int, std::string>> order;
  std::vector<Instance> alone;  // kernels without a launching op (NCCL, copies, unmatched)
  for (const Span& k : ev.kernels) {
    Instance x;
    classify(k, ev, &x);
    if (!x.why.empty()) {
      ++t->unmatched[x.why];
      continue;
    }
    const int op = k.launch >= 0 && !ev.launches[k.launch].stack.empty() && !k.is_memcpy &&
                           x.cls.rfind("nccl_", 0) != 0
                       ? ev.launches[k.launch].stack.back()
                       : -1;
    if (op < 0) {
      alone.push_back(x);
      continue;
    }
    const auto key = std::make_pair(op, x.cls);
    auto [it, fresh] = by_op.emplace(key, x);
    if (fresh)
      order.push_back(key);
    else
      it->second.time += x.time;
  }
  std::vector<Instance> all;
  for (const auto& key : order)
    all.push_back(by_op[key]);
  all.insert(all.end(), alone.begin(), alone.end());
  std::map<std::tuple<std::string, std::string, double, double, double, double, double, double>,
           size_t>
      index;
  for (const Instance& x : all) {
    const auto key = std::make_tuple(x.cls, x.dtype, x.batch, x.m, x.n, x.k, x.bytes, x.group);
    auto [it, fresh] = index.emplace(key, t->groups.size());
    if (fresh) {
      TraceKernelGroup g;
      g.cls = x.cls;
      g.dtype = x.dtype;
      g.op = x.op;
      g.batch = x.batch;
      g.m = x.m;
      g.n = x.n;
      g.k = x.k;
      g.bytes = x.bytes;
      g.group = x.group;
      g.kernel_name = x.kernel_name;
      t->groups.push_back(g);
    }
    t->groups[it->second].times_us.push_back(x.time);
  }
}

TraceHostCost host_costs(const Events& ev) {
  TraceHostCost h;
  std::vector<double> launch;
  std::map<int, int> kernels_of_top;
  for (const Span& l : ev.launches)
    if (contains(l.name, "LaunchKernel")) launch.push_back(l.dur);
  h.launches = static_cast<int>(launch.size());
  h.launch_median_us = median(launch);
  std::map<std::string, std::vector<const Span*>> by_stream;
  for (const Span& k : ev.kernels) {
    if (k.launch >= 0 && !ev.launches[k.launch].stack.empty())
      ++kernels_of_top[ev.launches[k.launch].stack.front()];
    if (!k.is_memcpy) by_stream[k.pid + "/" + k.stream].push_back(&k);
  }
  double host = 0;
  int kernels = 0;
  for (const auto& [op, n] : kernels_of_top) {
    host += ev.ops[op].dur;
    kernels += n;
  }
  h.ops = static_cast<int>(kernels_of_top.size());
  h.host_per_kernel_us = kernels > 0 ? host / kernels : 0;
  const std::vector<const Span*>* busiest = nullptr;
  for (const auto& [s, ks] : by_stream)
    if (!busiest || ks.size() > busiest->size()) busiest = &ks;
  std::vector<double> gaps;
  if (busiest) {
    std::vector<const Span*> ks = *busiest;
    std::sort(ks.begin(), ks.end(), [](const Span* a, const Span* b) { return a->ts < b->ts; });
    for (size_t i = 1; i < ks.size(); ++i) {
      const double gap = ks[i]->ts - ks[i - 1]->end();
      const bool host_bound =
          ks[i]->launch >= 0 && ev.launches[ks[i]->launch].ts > ks[i - 1]->end();
      if (gap > 0 && host_bound) gaps.push_back(gap);
    }
  }
  h.gaps = static_cast<int>(gaps.size());
  h.gpu_gap_median_us = median(gaps);
  return h;
}

std::vector<TraceStreamTime> stream_times(const Events& ev, double begin, double end) {
  std::map<std::string, std::vector<const Span*>> by_stream;
  for (const Span& k : ev.kernels)
    if (!k.is_memcpy && k.end() > begin && k.ts < end)
      by_stream[k.pid + "/" + k.stream].push_back(&k);
  std::vector<TraceStreamTime> out;
  for (auto& [name, ks] : by_stream) {
    std::sort(ks.begin(), ks.end(), [](const Span* a, const Span* b) { return a->ts < b->ts; });
    TraceStreamTime st;
    st.stream = name;
    st.kernels = static_cast<int>(ks.size());
    double cursor = begin;  // end of the busy time so far (kernels on one stream may overlap)
    const Span* prev = nullptr;
    for (const Span* k : ks) {
      const double s = std::max(k->ts, cursor), e = std::min(k->end(), end);
      if (s > cursor) {
        const bool host = prev && k->launch >= 0 && ev.launches[k->launch].ts > prev->end();
        (host ? st.host_us : st.idle_us) += s - cursor;
      }
      if (e > s) (contains(lower(k->name), "nccl") ? st.comm_us : st.compute_us) += e - s;
      cursor = std::max(cursor, e);
      prev = k;
    }
    if (end > cursor) st.idle_us += end - cursor;
    out.push_back(st);
  }
  std::sort(out.begin(), out.end(), [](const TraceStreamTime& a, const TraceStreamTime& b) {
    return a.compute_us + a.comm_us != b.compute_us + b.comm_us
               ? a.compute_us + a.comm_us > b.compute_us + b.comm_us
               : a.stream < b.stream;
  });
  return out;
}

}  // namespace fleetsim::trace_internal
