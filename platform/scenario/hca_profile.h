#pragma once
// Named hardware profiles of HCA hosts (`hca.profile`, docs/hca.md "Hardware profiles"): a
// set of values for keys of the scenario's `hca` section, each taken where the document does
// not write that key itself. A profile is data: the numbers and where each comes from.
#include <string>
#include <vector>

namespace ibvp {

struct HcaProfileValue {
  std::vector<std::string> path;  // keys below `hca`, e.g. {"host_bus", "latency"}
  std::string value;              // a YAML scalar, as a document would write it
  std::string source;             // where the number comes from (docs/hca.md repeats it)
};

struct HcaProfile {
  std::string name;
  std::string description;
  std::vector<HcaProfileValue> values;
};

// Every profile, in the order docs/hca.md lists them.
const std::vector<HcaProfile>& hca_profiles();
// The profile called `name`, or null.
const HcaProfile* find_hca_profile(const std::string& name);
// "connectx4_edr, ..." for error messages.
std::string hca_profile_names();

}  // namespace ibvp
