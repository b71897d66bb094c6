/**
 * The agents the guard's upstream requests go out on: direct keep-alive agents, or, where the
 * environment names a proxy for the target, a keep-alive agent through that proxy.
 *
 * Which proxy (if any) is `proxy-from-env`'s decision, made per target URL from the environment as it is
 * at the request: `HTTPS_PROXY` for an https upstream, `HTTP_PROXY` for an http one, `ALL_PROXY` for
 * either, each also lower-case (the lower-case form first), and `NO_PROXY` (host names, `.suffix` or
 * `*.suffix`, an optional `:port`, or `*`) to go direct. An https target goes through the proxy as a
 * CONNECT tunnel (`https-proxy-agent`: TLS end to end with the upstream, the proxy sees only the host and
 * port); an http target as an absolute-form request to the proxy (`http-proxy-agent`). A proxy URL's
 * user and password are sent to the proxy as `Proxy-Authorization: Basic` by those agents; they are
 * never logged (`proxyForLog`).
 */
import http from "node:http";
import https from "node:https";
import { HttpProxyAgent } from "http-proxy-agent";
import { HttpsProxyAgent } from "https-proxy-agent";
import { getProxyForUrl } from "proxy-from-env";

export interface UpstreamAgents {
  /** The agent for a request to `target`, and the proxy it goes through (for logs: no credentials), or null. */
  forTarget(target: URL): { agent: http.Agent; proxy: string | null };
  /** Destroys every agent made (open sockets are closed). */
  destroy(): void;
}

/** A proxy URL as it may be logged: scheme, host and port, never a user or a password. */
export function proxyForLog(proxy: string): string {
  try {
    const u = new URL(proxy);
    return `${u.protocol}//${u.host}`;
  } catch {
    return "(a proxy URL that does not parse)";
  }
}

/**
 * The upstream agents of one guard. `onFirstUse(origin, proxy)` is told the first time a target origin
 * goes through a given proxy (the guard logs it once).
 */
export function createUpstreamAgents(onFirstUse?: (origin: string, proxy: string) => void): UpstreamAgents {
  const direct = {
    "http:": new http.Agent({ keepAlive: true }),
    "https:": new https.Agent({ keepAlive: true }),
  };
  const proxied = new Map<string, http.Agent>();
  const told = new Set<string>();
  return {
    forTarget(target) {
      const https_ = target.protocol === "https:";
      const proxy = getProxyForUrl(target.href);
      if (proxy === "") return { agent: direct[https_ ? "https:" : "http:"], proxy: null };
      const key = `${target.protocol} ${proxy}`;
      let agent = proxied.get(key);
      if (agent === undefined) {
        let proxyUrl: URL;
        try {
          proxyUrl = new URL(proxy);
        } catch {
          throw new Error(
            `the proxy the environment names for ${target.origin} is not a URL (see HTTPS_PROXY, HTTP_PROXY, ALL_PROXY)`,
          );
        }
        agent = https_
          ? new HttpsProxyAgent(proxyUrl, { keepAlive: true })
          : new HttpProxyAgent(proxyUrl, { keepAlive: true });
        proxied.set(key, agent);
      }
      const shown = proxyForLog(proxy);
      const first = `${target.origin} ${shown}`;
      if (!told.has(first)) {
        told.add(first);
        onFirstUse?.(target.origin, shown);
      }
      return { agent, proxy: shown };
    },
    destroy() {
      direct["http:"].destroy();
      direct["https:"].destroy();
      for (const a of proxied.values()) a.destroy();
      proxied.clear();
    },
  };
}
