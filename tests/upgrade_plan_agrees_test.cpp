// `inspect --to N` and `upgrade --to N` agree (issue 26): over the
// generated test models and a sample of ONNX 1.23's node-test models, to
// targets across the range, the pre-flight lists a blocker exactly when
// the conversion (with its checks: ONNX's checker up to 17, bnorm's
// structural check) refuses; and every model it writes passes those checks.
#include <catch2/catch.hpp>

#include <filesystem>

#include "core/error.h"
#include "model/model.h"
#include "support/cli.h"
#include "transforms/upgrade/preflight.h"
#include "transforms/upgrade/upgrade.h"

using namespace bnorm;
using namespace bnorm::test;
namespace fs = std::filesystem;

namespace {

std::vector<fs::path> sample_models() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(testdata(""))) {
    if (e.path().extension() == ".onnx") out.push_back(e.path());
  }
  std::vector<fs::path> folders;
  for (const auto& e : fs::directory_iterator(testdata("onnx-node-1.23"))) {
    if (fs::exists(e.path() / "model.onnx")) folders.push_back(e.path() / "model.onnx");
  }
  std::sort(folders.begin(), folders.end());
  for (size_t i = 0; i < folders.size(); i += 25) out.push_back(folders[i]);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("inspect --to N lists a blocker exactly when upgrade --to N refuses", "[upgrade][plan]") {
  int converted = 0, refused = 0;
  for (const auto& path : sample_models()) {
    Model m = [&] {
      try {
        return load_model(path);
      } catch (const Error&) {
        return Model{};
      }
    }();
    if (!m.proto.has_graph()) continue;  // not loadable: not a case for either
    for (const int64_t to : {1, 7, 11, 13, 17, 18, 23}) {
      INFO(path.filename().string() << " (" << path.parent_path().filename().string() << ") -> " << to);
      const UpgradePlan plan = plan_upgrade_model(m, to);
      Model copy = m;
      UpgradeOptions o;
      o.target = to;
      std::string why;
      try {
        upgrade_model(copy, o);
        check_model_full(copy.proto, m.dir());
      } catch (const Error& e) {
        why = e.what();
      }
      INFO("upgrade: " << (why.empty() ? "converts" : why));
      INFO("plan: " << (plan.blockers.empty() ? "no blocker" : plan.blockers.front()));
      CHECK(plan.blockers.empty() == why.empty());
      (why.empty() ? converted : refused)++;
    }
  }
  // The sample exercises both sides.
  CHECK(converted > 100);
  CHECK(refused > 20);
}
