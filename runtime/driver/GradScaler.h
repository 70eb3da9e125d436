// Dynamic loss scaling for f16 training, torch.amp.GradScaler's update
// rule on the host (docs/passes/amp.md, "Loss scaling"). The compiled
// fwd_bwd seeds the backward with the scale (the `loss_scale` hyper), the
// compiled update unscales the gradients, skips the step when one is inf or
// NaN and says so in `out:found_inf`; this class then moves the scale as
// torch._amp_update_scale_ does. (The trainer counts the skipped steps.)
#pragma once

#include "runtime/driver/Manifest.h"

#include <cstdint>

namespace modelc::rt {

class GradScaler {
public:
  explicit GradScaler(const GradScalerInfo &settings)
      : settings_(settings), scale_(float(settings.initScale)) {}

  /// The scale the next step's backward multiplies the loss by (f32, as
  /// torch keeps it).
  float scale() const { return scale_; }
  /// Consecutive steps with finite gradients since the scale last moved.
  int64_t growthTracker() const { return growthTracker_; }

  /// After a step: `foundInf` (the step was skipped) backs the scale off;
  /// otherwise `growth_interval` finite steps in a row grow it (when the
  /// grown scale is finite).
  void update(bool foundInf);

  /// The state a checkpoint recorded; false when no run can reach it (a
  /// scale that is not a finite positive f32, a negative tracker).
  bool restore(double scale, int64_t growthTracker);

private:
  GradScalerInfo settings_;
  float scale_;
  int64_t growthTracker_ = 0;
};

} // namespace modelc::rt
