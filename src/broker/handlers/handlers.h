#pragma once
// The request handlers, one file each under handlers/. Each decodes its
// request, acts through the Broker's services, and responds.

namespace samsa {

class Broker;
class Request;

void handle_api_versions(Broker& broker, Request& request);
void handle_metadata(Broker& broker, Request& request);
void handle_produce(Broker& broker, Request& request);
void handle_fetch(Broker& broker, Request& request);
void handle_list_offsets(Broker& broker, Request& request);

}  // namespace samsa
