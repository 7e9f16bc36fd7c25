// A real OpenID provider for the sign-in tests: the npm `oidc-provider` (OpenID Certified),
// with one confidential client, people and their groups read from PEOPLE_FILE (JSON, read again
// at every sign-in so a test can move a person between groups), and its own login page.
//
// env: PORT, CLIENT_ID, CLIENT_SECRET, REDIRECT_URIS (comma-separated), PEOPLE_FILE,
//      GROUPS_IN_ID_TOKEN=1 (else the groups come from userinfo only).
// Test-only: POST /__mischief?mode=foreign_key|wrong_aud|wrong_nonce|expired|off makes the
// token endpoint hand out an ID token an attacker would forge (another key with the same kid,
// another audience, another nonce, an expired one), so the client's checks can be attacked.
import { readFileSync } from "node:fs";
import http from "node:http";
import { URLSearchParams } from "node:url";
import * as jose from "jose";
import Provider from "oidc-provider";

const port = Number(process.env.PORT);
const issuer = `http://127.0.0.1:${port}`;
const people = () => JSON.parse(readFileSync(process.env.PEOPLE_FILE, "utf8"));

async function signingKey(kid) {
  const { privateKey } = await jose.generateKeyPair("RS256", { extractable: true });
  return { ...(await jose.exportJWK(privateKey)), kid, alg: "RS256", use: "sig" };
}
const realKey = await signingKey("k1");
const foreignKey = await signingKey("k1"); // same kid, another key: only the signature differs

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: process.env.CLIENT_ID,
      client_secret: process.env.CLIENT_SECRET,
      redirect_uris: process.env.REDIRECT_URIS.split(","),
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
    },
  ],
  jwks: { keys: [realKey] },
  claims: {
    openid: ["sub"],
    profile: ["preferred_username", "name", "groups", "teams"],
    email: ["email"],
  },
  conformIdTokenClaims: process.env.GROUPS_IN_ID_TOKEN !== "1",
  features: { devInteractions: { enabled: false } },
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  // first-party client: no consent screen (the grant is made at login)
  async loadExistingGrant(ctx) {
    const grant = new ctx.oidc.provider.Grant({
      clientId: ctx.oidc.client.clientId,
      accountId: ctx.oidc.session.accountId,
    });
    grant.addOIDCScope("openid profile email");
    await grant.save();
    return grant;
  },
  async findAccount(ctx, id) {
    const person = people()[id];
    if (!person) return undefined;
    return {
      accountId: id,
      async claims() {
        return {
          sub: id,
          preferred_username: person.username ?? id,
          name: person.name ?? id,
          email: `${id}@example.org`,
          groups: person.groups ?? [],
          teams: person.teams ?? [],
        };
      },
    };
  },
  ttl: { Session: 600, Interaction: 600, Grant: 600, AccessToken: 600, AuthorizationCode: 60, IdToken: 600 },
});

let mischief = "off";
provider.use(async (ctx, next) => {
  await next();
  if (ctx.path !== "/token" || mischief === "off" || !ctx.body?.id_token) return;
  const claims = jose.decodeJwt(ctx.body.id_token);
  let key = realKey;
  if (mischief === "foreign_key") key = foreignKey;
  if (mischief === "wrong_aud") claims.aud = "someone-else";
  if (mischief === "wrong_nonce") claims.nonce = "not-the-nonce";
  if (mischief === "expired") claims.exp = Math.floor(Date.now() / 1000) - 3600;
  ctx.body = {
    ...ctx.body,
    id_token: await new jose.SignJWT(claims)
      .setProtectedHeader({ alg: "RS256", kid: "k1" })
      .sign(await jose.importJWK(key, "RS256")),
  };
});

const page = (uid, problem) => `<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Test provider: sign in</title></head><body><h1>Test provider</h1>
${problem ? `<p role="alert">${problem}</p>` : ""}
<form method="post" action="/interaction/${uid}">
<label>Login <input name="login" autocomplete="username" autofocus></label>
<label>Password <input name="password" type="password" autocomplete="current-password"></label>
<button type="submit">Sign in at the provider</button></form></body></html>`;

async function readForm(req) {
  let body = "";
  for await (const chunk of req) body += chunk;
  return new URLSearchParams(body);
}

async function interaction(req, res, uid) {
  const details = await provider.interactionDetails(req, res);
  if (details.uid !== uid || details.prompt.name !== "login") {
    res.writeHead(400).end("unexpected interaction");
    return;
  }
  res.setHeader("Content-Type", "text/html; charset=utf-8");
  if (req.method === "GET") {
    res.end(page(uid));
    return;
  }
  const form = await readForm(req);
  const person = people()[form.get("login")];
  if (!person || !form.get("password") || person.password !== form.get("password")) {
    res.end(page(uid, "Wrong login or password."));
    return;
  }
  await provider.interactionFinished(req, res, { login: { accountId: form.get("login") } }, {
    mergeWithLastSubmission: false,
  });
}

const callback = provider.callback();
http
  .createServer(async (req, res) => {
    try {
      const url = new URL(req.url, issuer);
      const match = /^\/interaction\/([A-Za-z0-9_-]+)$/.exec(url.pathname);
      if (url.pathname === "/__mischief" && req.method === "POST") {
        mischief = url.searchParams.get("mode") ?? "off";
        res.end(mischief);
      } else if (match) {
        await interaction(req, res, match[1]);
      } else {
        callback(req, res);
      }
    } catch (error) {
      res.writeHead(500).end(String(error));
    }
  })
  .listen(port, "127.0.0.1", () => console.log(`oidc-provider listening on ${issuer}`));
