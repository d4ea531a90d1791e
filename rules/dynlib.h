// The dynamic libraries moved to base/dynlib.h; this name stays for code
// that still spells them rules::dyn.
#pragma once

#include "base/dynlib.h"

namespace referee::rules {
namespace dyn = base::dyn;
}  // namespace referee::rules
