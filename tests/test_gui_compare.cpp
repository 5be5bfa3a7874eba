// dsgd-gui --compare: the runs `dsgd compare --json` wrote, as curves the convergence view
// overlays under the live or replayed run's own.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.h"
#include "core/smoothing.h"
#include "gui/model/app.h"
#include "gui/model/compare_curves.h"

using namespace dsgd;
using namespace dsgd::gui;
using dsgd::test::run_dsgd;
using dsgd::test::TempDir;

TEST_CASE("dsgd-gui reads the runs dsgd compare wrote, with their loss smoothed as its plot",
          "[gui][compare]") {
  TempDir dir;
  const auto r = run_dsgd("compare -q --nodes 2 --steps 12 --runs sync compress=fp16 --json " +
                          (dir / "c.json"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::vector<Curve> curves = load_compare_curves(dir / "c.json");
  REQUIRE(curves.size() == 2);
  CHECK(curves[0].label == "sync");
  CHECK(curves[1].label == "compress=fp16");
  for (const Curve& c : curves) {
    REQUIRE(c.points.size() == 12);
    CHECK(c.points.back().step == 12);
    CHECK(c.points.back().model_s > 0);
    CHECK(c.points.back().test_accuracy > 0);  // the last step is evaluated
  }
  // The moving average starts at the first loss and lags behind a falling curve.
  const nlohmann::json j = nlohmann::json::parse(dsgd::test::read_text(dir / "c.json"));
  std::vector<double> raw;
  for (const nlohmann::json& s : j["runs"][0]["steps"])
    raw.push_back(s["loss"].get<double>());
  const std::vector<double> trend = smoothed(raw);
  for (size_t i = 0; i < raw.size(); ++i)
    CHECK(curves[0].points[i].loss == trend[i]);
  CHECK(trend.front() == raw.front());
}

TEST_CASE("compared runs come first in every snapshot, under the run being shown",
          "[gui][compare]") {
  GuiApp app;
  Curve a{.label = "sync", .points = {{.step = 1, .loss = 2.0}}};
  Curve b{.label = "local-sgd=8", .points = {{.step = 1, .loss = 1.5}}};
  app.set_compared({a, b});
  const Snapshot s = app.snapshot();
  CHECK(s.compared_curves == 2);
  REQUIRE(s.curves.size() >= 2);
  CHECK(s.curves[0].label == "sync");
  CHECK(s.curves[1].label == "local-sgd=8");
}
