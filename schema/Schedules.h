// The learning-rate schedules of schema/Schedules.def as a C++ table, for
// the frontend, the passes and the runtime. Plain C++.
#pragma once

#include <string_view>

namespace modelc::schedules {

struct ScheduleDef {
  const char *name;
  const char *signature;
  bool warmup;
};

inline constexpr ScheduleDef kSchedules[] = {
#define MODELC_SCHEDULE(NAME, SIGNATURE, WARMUP) {#NAME, SIGNATURE, WARMUP},
#include "schema/Schedules.def"
};

/// The schedule called `name`; nullptr when there is none.
inline const ScheduleDef *find(std::string_view name) {
  for (const ScheduleDef &s : kSchedules)
    if (name == s.name)
      return &s;
  return nullptr;
}

/// Whether schedule `name` ramps up over `warmup` steps first.
inline bool hasWarmup(std::string_view name) {
  const ScheduleDef *s = find(name);
  return s && s->warmup;
}

} // namespace modelc::schedules
