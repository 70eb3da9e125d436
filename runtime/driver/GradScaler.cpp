// torch.amp.GradScaler's update rule; see GradScaler.h.
#include "runtime/driver/GradScaler.h"

#include <algorithm>
#include <cmath>

namespace modelc::rt {

void GradScaler::update(bool foundInf) {
  // torch._amp_update_scale_cpu_: the products in double, stored as float.
  if (foundInf) {
    scale_ = float(double(scale_) * settings_.backoffFactor);
    growthTracker_ = 0;
    return;
  }
  int64_t successful = growthTracker_ + 1;
  if (successful == settings_.growthInterval) {
    float grown = float(double(scale_) * settings_.growthFactor);
    if (std::isfinite(grown))
      scale_ = grown;
    growthTracker_ = 0;
  } else {
    growthTracker_ = successful;
  }
}

bool GradScaler::restore(double scale, int64_t growthTracker) {
  float value = float(scale);
  if (!(value > 0) || !std::isfinite(value) || double(value) != scale ||
      growthTracker < 0)
    return false;
  scale_ = value;
  // A run resumed with a shorter --set grad_scaler.growth_interval than
  // the tracker has counted grows at its next finite step.
  growthTracker_ = std::min(growthTracker, settings_.growthInterval - 1);
  return true;
}

} // namespace modelc::rt
