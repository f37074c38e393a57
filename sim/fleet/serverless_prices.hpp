#pragma once
// The serverless GPU platforms of the serving fleet's serverless market:
// data/serverless_prices.json compiled into the library, parsed once (immutable).
//
// Per provider: the price per GPU-second by accelerator (the compute catalog's names, unchecked
// here), the platform's container start and image pull before the model loads (the defaults
// of a serverless replica's cold start; the model load comes from its weights), and the idle
// timeout after which an idle replica is scaled down. Billing is per second from a replica's
// start to its stop (cold start, requests, idle window). Every figure carries its source.
//
// Format: { "providers": { "<name>": { "billing": str,
//             "container_start" | "image_pull" | "idle_timeout": { "s": number >= 0, "source": str },
//             "usd_per_gpu_second": { "<gpu>": { "usd": number > 0, "source": str } } } } }
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace cs::fleet {

struct SourcedValue {
  double value = 0.0;  // seconds, or USD per GPU-second
  std::string source;
};

struct ServerlessProvider {
  std::string name;     // "modal", "runpod", "cloud_run"
  std::string billing;  // what is billed, with its source
  SourcedValue container_start_s, image_pull_s, idle_timeout_s;
  std::map<std::string, SourcedValue, std::less<>> usd_per_gpu_second;  // by accelerator

  // nullptr when the provider does not sell `gpu` serverless.
  const SourcedValue* price(std::string_view gpu) const;
};

class ServerlessCatalog {
 public:
  // Throws std::invalid_argument naming the JSON path ("serverless_prices.<path>").
  static ServerlessCatalog parse(std::string_view json_text);
  static const ServerlessCatalog& builtin();

  const ServerlessProvider* find(std::string_view provider) const;
  std::vector<std::string> names() const;
  // The providers that sell `gpu` serverless, by name.
  std::vector<std::string> selling(std::string_view gpu) const;

 private:
  std::map<std::string, ServerlessProvider, std::less<>> providers_;
};

// The text of data/serverless_prices.json.
std::string_view serverless_prices_text();

}  // namespace cs::fleet
