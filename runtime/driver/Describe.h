// The describe command: entries, parameters, data, memory plan, targets and
// source hash, as text or (--json) as one JSON object.
#pragma once

#include "runtime/driver/Manifest.h"

#include <ostream>

namespace modelc::rt {

void describeText(const Manifest &manifest, std::ostream &out);
void describeJson(const Manifest &manifest, std::ostream &out);

} // namespace modelc::rt
