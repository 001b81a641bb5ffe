// sycl_graphs_styles: one SYCL graph (sycl_ext_oneapi_graph) per recording
// style, each finalised and replayed twice, in one run, on the default
// device (the OpenCL CPU device here; a GPU where there is one). USM
// copies, memsets and fills, buffer fills and copies, and a native command
// whose body adds nothing: no kernels, so it runs on any backend.
//   in_order     an in-order queue records a memcpy, a memset, a fill:
//                each waits for the one before it
//   out_of_order an out-of-order queue records a memcpy A, a memset B that
//                depends_on A, a memcpy C on its own, and a memset D that
//                depends_on A and C (it overwrites their source)
//   accessors    an out-of-order queue records buffer fills of a and c,
//                then copies a to b and c to d: each copy waits for the
//                fill it reads, through its accessors
//   explicit     the explicit API: a memcpy A, a memcpy B, and a memset C
//                added with depends_on(A), then make_edge(B, C)
//   fork_join    two in-order queues record into one graph: A on the
//                first, B on the second depends_on A, C on the first (after
//                A), D on the first depends_on B (after C)
//   native       an in-order queue records a memcpy, a native command
//                (ext_codeplay_enqueue_native_command, adding nothing), a
//                memset
//   nested       a graph (a memcpy to z, a memset of w) is finalised, then
//                replayed while another is recorded between a memset of z
//                and a memset of w: the runtime copies its commands into
//                the other's command buffer
// `--profiling` finalises every graph with property::graph::enable_profiling
// (the runtime then hands out sync points on every backend); by default
// they are finalised with a plain finalize(), as most programs do.
// `--settle-ms N` pauses after the first command, before any graph.
// Prints `<style> ok` when the data after the replays is what the graph's
// order makes it, else `<style> wrong ...`.
#include "common.hpp"

#include <sycl/ext/oneapi/experimental/graph.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace exp_ext = sycl::ext::oneapi::experimental;
using Graph = exp_ext::command_graph<exp_ext::graph_state::modifiable>;

constexpr size_t N = 1024;
constexpr size_t BYTES = N * sizeof(int);

static bool profiling = false;

static auto finalize(Graph &g) {
  if (profiling) return g.finalize({exp_ext::property::graph::enable_profiling{}});
  return g.finalize();
}

static void replay_twice(sycl::queue &q, exp_ext::command_graph<exp_ext::graph_state::executable> &e) {
  q.ext_oneapi_graph(e);
  q.ext_oneapi_graph(e);
  q.wait();
}

static int first(sycl::queue &q, const int *p) {
  int v = -1;
  q.memcpy(&v, p, sizeof(int)).wait();
  return v;
}

static void check(const char *style, bool ok, int a, int b) {
  if (ok)
    std::printf("%s ok\n", style);
  else
    std::printf("%s wrong %d %d\n", style, a, b);
}

int main(int argc, char **argv) {
  int settle_ms = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--profiling") == 0) profiling = true;
    if (std::strcmp(argv[i], "--settle-ms") == 0 && i + 1 < argc) settle_ms = std::atoi(argv[i + 1]);
  }
  sycl::queue q{sycl::property::queue::in_order()};
  sycl::queue q2{q.get_context(), q.get_device(), sycl::property::queue::in_order()};
  sycl::queue ooo{q.get_context(), q.get_device()};
  int *x = sycl::malloc_device<int>(N, q);
  int *y = sycl::malloc_device<int>(N, q);
  int *z = sycl::malloc_device<int>(N, q);
  int *w = sycl::malloc_device<int>(N, q);
  std::vector<int> ones(N, 1);
  q.memcpy(x, ones.data(), BYTES).wait();
  std::this_thread::sleep_for(std::chrono::milliseconds(settle_ms));

  {  // in_order: y = x (1), then x = 0, then y = 5.
    Graph g{q.get_context(), q.get_device()};
    g.begin_recording(q);
    q.memcpy(y, x, BYTES);     // @node in_order_memcpy
    q.memset(x, 0, BYTES);     // @node in_order_memset
    q.fill(y, 5, N);           // @node in_order_fill
    g.end_recording(q);
    auto e = finalize(g);
    replay_twice(q, e);        // @node in_order_replay
    int vx = first(q, x), vy = first(q, y);
    check("in_order", vx == 0 && vy == 5, vx, vy);
  }
  q.memcpy(x, ones.data(), BYTES).wait();
  {  // out_of_order: y = x, z = 0 after y, w = x, then x = 0.
    Graph g{ooo.get_context(), ooo.get_device()};
    g.begin_recording(ooo);
    auto a = ooo.memcpy(y, x, BYTES);                                  // @node ooo_a
    ooo.submit([&](sycl::handler &h) {                                 // @node ooo_b
      h.depends_on(a);
      h.memset(z, 0, BYTES);
    });
    auto c = ooo.memcpy(w, x, BYTES);                                  // @node ooo_c
    ooo.submit([&](sycl::handler &h) {                                 // @node ooo_d
      h.depends_on({a, c});
      h.memset(x, 0, BYTES);
    });
    g.end_recording(ooo);
    auto e = finalize(g);
    ooo.ext_oneapi_graph(e).wait();                                    // @node ooo_replay
    int vy = first(q, y), vw = first(q, w);
    // One replay: the copies read x before the memset cleared it.
    check("out_of_order", vy == 1 && vw == 1, vy, vw);
    ooo.ext_oneapi_graph(e).wait();
  }
  {  // accessors: a = 3, c = 4, then b = a and d = c.
    sycl::buffer<int> ba{N}, bb{N}, bc{N}, bd{N};
    {
      Graph g{ooo.get_context(), ooo.get_device(),
              {exp_ext::property::graph::assume_buffer_outlives_graph{}}};
      g.begin_recording(ooo);
      ooo.submit([&](sycl::handler &h) {  // @node acc_fill_a
        sycl::accessor a{ba, h, sycl::write_only};
        h.fill(a, 3);
      });
      ooo.submit([&](sycl::handler &h) {  // @node acc_fill_c
        sycl::accessor c{bc, h, sycl::write_only};
        h.fill(c, 4);
      });
      ooo.submit([&](sycl::handler &h) {  // @node acc_copy_ab
        sycl::accessor a{ba, h, sycl::read_only};
        sycl::accessor b{bb, h, sycl::write_only};
        h.copy(a, b);
      });
      ooo.submit([&](sycl::handler &h) {  // @node acc_copy_cd
        sycl::accessor c{bc, h, sycl::read_only};
        sycl::accessor d{bd, h, sycl::write_only};
        h.copy(c, d);
      });
      g.end_recording(ooo);
      auto e = finalize(g);
      replay_twice(ooo, e);  // @node acc_replay
    }
    sycl::host_accessor hb{bb}, hd{bd};
    check("accessors", hb[0] == 3 && hd[0] == 4, hb[0], hd[0]);
  }
  q.memcpy(x, ones.data(), BYTES).wait();
  {  // explicit: y = x, z = x, then x = 0 after both.
    Graph g{q.get_context(), q.get_device()};
    auto a = g.add([&](sycl::handler &h) { h.memcpy(y, x, BYTES); });  // @node explicit_a
    auto b = g.add([&](sycl::handler &h) { h.memcpy(z, x, BYTES); });  // @node explicit_b
    auto c = g.add([&](sycl::handler &h) { h.memset(x, 0, BYTES); },   // @node explicit_c
                   {exp_ext::property::node::depends_on(a)});
    g.make_edge(b, c);
    auto e = finalize(g);
    q.ext_oneapi_graph(e).wait();  // @node explicit_replay
    int vy = first(q, y), vz = first(q, z);
    check("explicit", vy == 1 && vz == 1, vy, vz);
    q.ext_oneapi_graph(e).wait();
  }
  q.memcpy(x, ones.data(), BYTES).wait();
  {  // fork_join: y = x on q; z = 7 on q2 after it; x = 0 on q; w = z on q.
    Graph g{q.get_context(), q.get_device()};
    g.begin_recording({q, q2});
    auto a = q.memcpy(y, x, BYTES);       // @node fork_a
    auto b = q2.submit([&](sycl::handler &h) {  // @node fork_b
      h.depends_on(a);
      h.fill(z, 7, N);
    });
    q.memset(x, 0, BYTES);                // @node fork_c
    q.submit([&](sycl::handler &h) {      // @node join_d
      h.depends_on(b);
      h.memcpy(w, z, BYTES);
    });
    g.end_recording();
    auto e = finalize(g);
    replay_twice(q, e);  // @node fork_replay
    int vw = first(q, w), vx = first(q, x);
    check("fork_join", vw == 7 && vx == 0, vw, vx);
  }
  q.memcpy(x, ones.data(), BYTES).wait();
  {  // native: y = x, a native command, then x = 0.
    Graph g{q.get_context(), q.get_device()};
    g.begin_recording(q);
    q.memcpy(y, x, BYTES);                         // @node native_memcpy
    q.submit([&](sycl::handler &h) {               // @node native_command
      h.ext_codeplay_enqueue_native_command([=](sycl::interop_handle) {});
    });
    q.memset(x, 0, BYTES);                         // @node native_memset
    g.end_recording(q);
    auto e = finalize(g);
    replay_twice(q, e);  // @node native_replay
    int vy = first(q, y), vx = first(q, x);
    // The second replay copies the first one's zeros.
    check("native", vy == 0 && vx == 0, vy, vx);
  }
  q.memcpy(x, ones.data(), BYTES).wait();
  {  // nested: z = 3, then (sub) z = x and w = 0, then w = 4.
    Graph sub{q.get_context(), q.get_device()};
    sub.begin_recording(q);
    q.memcpy(z, x, BYTES);     // @node nested_sub_memcpy
    q.memset(w, 0, BYTES);     // @node nested_sub_memset
    sub.end_recording(q);
    auto inner = finalize(sub);
    Graph g{q.get_context(), q.get_device()};
    g.begin_recording(q);
    q.memset(z, 3, BYTES);     // @node nested_memset_z
    q.ext_oneapi_graph(inner);
    q.memset(w, 4, BYTES);     // @node nested_memset_w
    g.end_recording(q);
    auto e = finalize(g);
    replay_twice(q, e);  // @node nested_replay
    int vz = first(q, z), vw = first(q, w);
    check("nested", vz == 1 && vw == 0x04040404, vz, vw);
  }
  for (int *p : {x, y, z, w}) sycl::free(p, q);
  std::printf("done\n");
  return 0;
}
