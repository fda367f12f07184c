#pragma once
// The UUID wire type (topic ids, directory ids): 16 raw bytes, all-zero for
// Kafka's null/unset id. It is the model's Uuid itself, so ids decoded from
// requests compare with the metadata's without conversion.

#include "model/uuid.h"

namespace samsa::protocol {

using Uuid = samsa::Uuid;

}  // namespace samsa::protocol
