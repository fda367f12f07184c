#pragma once
// What a forwarded request's answer says about the controller that gave it:
// whether any of its error codes is NOT_CONTROLLER, i.e. the node reached
// was not (or no longer) the active controller when it planned the change.
// The forwarding node then sends the request again to the controller it
// knows next, as Kafka's ForwardingManager does with an Envelope answered
// NOT_CONTROLLER (Kafka's controller turns an inner NOT_CONTROLLER into the
// envelope's error by counting the inner answer's errors: this is that count).
//
// Only the APIs ControllerForwarder::forwards() are known; any other key, or
// a body that does not decode at that version, says no (the client gets the
// answer as it came).

#include <cstdint>

#include "base/bytes.h"

namespace samsa {

bool forwarded_answer_says_not_controller(int16_t api_key, int16_t api_version, ByteView response_body);

}  // namespace samsa
