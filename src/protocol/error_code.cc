#include "protocol/error_code.h"

namespace samsa::protocol {

const char* error_name(ErrorCode e) {
  switch (e) {
#define SAMSA_ERROR_CASE(name, code, text) \
  case ErrorCode::name:                    \
    return text;
    SAMSA_KAFKA_ERROR_CODES(SAMSA_ERROR_CASE)
#undef SAMSA_ERROR_CASE
  }
  return "UNKNOWN_ERROR_CODE";
}

}  // namespace samsa::protocol
