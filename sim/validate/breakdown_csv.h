// `fleetsim validate --csv FILE`: every row of the reference with its status, the prediction in
// the row's unit, and for modelled training rows the predicted step broken down (compute,
// exposed communication per parallel dimension, pipeline bubble, optimizer; seconds per step on
// the critical rank) and whether the configuration fits in HBM, so a user can see why a row is
// off. GPU time waiting for host launches is host_exposed_s. Fixed number formats.
#pragma once

#include <string>

#include "validate/validate.h"

namespace fleetsim {

std::string validation_breakdown_csv(const ValidationReport& rep);

}  // namespace fleetsim
