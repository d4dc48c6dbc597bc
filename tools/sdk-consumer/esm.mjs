// An ES module that uses the packed SDK the way a customer would.
import { createServer } from 'node:net';
import { ApiTimeoutError, ApiUserAbortError, createClient, NotFoundError } from '@agentline/sdk';
import { verifyWebhook, WebhookVerificationError } from '@agentline/sdk/webhooks';
import { Webhook } from 'standardwebhooks';

function check(condition, message) {
  if (!condition) throw new Error(message);
}

/** An experiment's variants as a create body takes them. */
const writableVariants = (experiment) =>
  experiment.variants.map(({ name, weight, is_control, agent_id }) => ({
    name,
    weight,
    is_control,
    agent_id,
  }));

const client = createClient(); // AGENTLINE_API_KEY and AGENTLINE_BASE_URL from the environment
const events = await client.events.list({ limit: 5 });
if (events.items.length !== 5) throw new Error(`expected 5 events, got ${events.items.length}`);

const [draft] = (
  await client.experiments.list({ search_fields: ['status'], search_field_values: ['draft'] })
).items;
const created = await client.experiments.create({
  name: 'ESM consumer',
  target_id: draft.target_id,
  variants: writableVariants(draft),
  end_at: new Date(Date.now() + 24 * 3600 * 1000).toISOString(),
  max_sessions: 1000,
});
check(created.max_sessions === 1000 && created.ended_reason === null, 'the planned end is kept');
const started = await client.experiments.start(created.id);
// The preview answers what routing then does, and routes nothing itself.
const preview = await client.channelTargets.assignment(draft.target_id, '+14155550100');
const routed = await client.sessions.route(draft.target_id, { user_id: '+14155550100' });
check(
  preview.variant_id === routed.variant_id && preview.agent_id === routed.agent_id,
  'the assignment preview equals the routing answer',
);
const results = await client.experiments.results(created.id);
check(results.total_sessions === 1, `one session counted, got ${results.total_sessions}`);
const timeline = await client.experiments.timeline(created.id, { time_zone: 'Asia/Kolkata' });
const inBuckets = timeline.buckets
  .flatMap((b) => b.variants)
  .reduce((n, v) => n + v.session_count, 0);
check(inBuckets === 1, `the timeline adds up to the results, got ${inBuckets}`);
await client.experiments.stop(created.id);
const actions = [];
for await (const change of client.experiments.iterateHistory(created.id, { limit: 1 })) {
  actions.push(change.action);
}
check(actions.join() === 'stopped,started,created', `the history, newest first: ${actions}`);
const missing = await client.experiments.get(999999).catch((error) => error);
check(missing instanceof NotFoundError && missing.status === 404, 'expected a NotFoundError');
check(missing.requestId, 'a NotFoundError carries the request id');

// withResponse: the body with the Response and its request id.
const { data, response, requestId } = await client.experiments
  .get(created.id, { headers: { 'X-Request-Id': 'consumer-esm-1' } })
  .withResponse();
check(data.id === created.id && response.status === 200, 'withResponse gives the body and 200');
check(requestId === 'consumer-esm-1', `withResponse gives the request id, got ${requestId}`);
// The key's quota: the IETF RateLimit fields of the answer, read by the SDK.
const { rateLimit } = await client.experiments.get(created.id).withResponse();
check(
  /^"default";r=\d+;t=\d+$/.test(response.headers.get('ratelimit') ?? '') &&
    rateLimit?.policy === 'default' &&
    rateLimit.remaining > 0 &&
    rateLimit.quota > rateLimit.remaining &&
    rateLimit.windowSeconds === 60,
  `withResponse gives the RateLimit fields, got ${response.headers.get('ratelimit')} and ${JSON.stringify(rateLimit)}`,
);
check(missing.rateLimit?.policy === 'default', 'an error carries the RateLimit fields');

// Per-call options: an Idempotency-Key of our own makes a repeated create one experiment.
const copy = {
  name: 'ESM consumer, keyed',
  target_id: draft.target_id,
  variants: writableVariants(draft),
};
const idempotencyKey = `esm-consumer-${Date.now()}`;
const first = await client.experiments.create(copy, { idempotencyKey, maxRetries: 0 });
const again = await client.experiments.create(copy, { idempotencyKey }).withResponse();
check(again.data.id === first.id, 'the same idempotencyKey gives the same experiment');
check(again.response.headers.get('idempotent-replayed') === 'true', 'the second is a replay');

// A caller's abort and a timeout signal: their own classes, and nothing sent.
const aborted = await client.events.list({}, { signal: AbortSignal.abort() }).catch((e) => e);
check(aborted instanceof ApiUserAbortError, `abort() gives ApiUserAbortError, got ${aborted}`);
const timedOut = AbortSignal.timeout(1);
await new Promise((resolve) => setTimeout(resolve, 20));
const late = await client.events.list({}, { signal: timedOut }).catch((e) => e);
check(late instanceof ApiTimeoutError, `AbortSignal.timeout gives ApiTimeoutError, got ${late}`);

// The SDK's own timeout, per call, against a server that accepts and never answers.
const silent = createServer(() => {});
await new Promise((resolve) => silent.listen(0, '127.0.0.1', resolve));
try {
  const quiet = createClient({ baseUrl: `http://127.0.0.1:${silent.address().port}` });
  const started = Date.now();
  const error = await quiet.events.list({}, { timeout: 200, maxRetries: 0 }).catch((e) => e);
  check(error instanceof ApiTimeoutError, `timeout gives ApiTimeoutError, got ${error}`);
  check(Date.now() - started < 5_000, 'the timeout ends the call');
} finally {
  silent.close();
  silent.unref();
}

// The live stream: a replay from start_datetime, then a session routed now arrives live, and
// `position` resumes a new iterator right after what the first one handed out.
// Counted now: the calls above routed sessions, which logged events of their own.
const { total_count: eventsBeforeStream } = await client.events.list({ limit: 0 });
const following = new AbortController();
const streamed = client.events.stream(
  { start_datetime: '2000-01-01T00:00:00Z' },
  { signal: following.signal },
);
let replayed = 0;
let routedLive = false;
for await (const event of streamed) {
  replayed += 1;
  if (replayed === eventsBeforeStream && !routedLive) {
    routedLive = true;
    await client.sessions.route(draft.target_id, { user_id: 'esm-consumer' });
  }
  if (replayed > eventsBeforeStream && event.type === 'session-started') following.abort();
}
check(replayed > eventsBeforeStream, `the stream replayed and followed, got ${replayed}`);
check(streamed.position, 'the stream exposes its position');
const afterRestart = new AbortController();
setTimeout(() => afterRestart.abort(), 1_000);
let repeated = 0;
for await (const event of client.events.stream(
  {},
  { lastEventId: streamed.position, signal: afterRestart.signal },
)) {
  check(event.timestamp, 'events carry their timestamp');
  repeated += 1;
}
check(repeated === 0, `resuming from position repeats nothing, got ${repeated}`);

// Webhooks: an endpoint's life, and its secret verifying what the reference library signs with it,
// as the server does. The URL is a closed port here (the server allows loopback and http only for
// this check), and the endpoint is deleted before anything could be delivered to it.
const hook = await client.webhooks.create({
  url: 'http://127.0.0.1:9/esm-consumer',
  description: 'ESM consumer',
  message_types: ['experiment.status_changed'],
});
check(/^whsec_[A-Za-z0-9+/]{32,}={0,2}$/.test(hook.secret), 'create answers the secret once');
const listed = await client.webhooks.list({ limit: 100 });
check(
  listed.items.some((item) => item.id === hook.id && !('secret' in item)),
  'list shows the endpoint without its secret',
);
const body = JSON.stringify({
  type: 'webhook.test',
  position: null,
  data: { endpoint_id: hook.id },
});
const sentAt = new Date();
const headers = {
  'webhook-id': 'msg_esm_consumer',
  'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
  'webhook-signature': new Webhook(hook.secret).sign('msg_esm_consumer', sentAt, body),
};
const verified = await verifyWebhook(body, new Headers(headers), hook.secret);
check(verified.type === 'webhook.test', `verifyWebhook returns the body, got ${verified.type}`);
const forged = await verifyWebhook(body.replace('test', 'tset'), headers, hook.secret).catch(
  (e) => e,
);
check(
  forged instanceof WebhookVerificationError && forged.reason === 'bad_signature',
  `a changed body is refused, got ${forged}`,
);
await client.webhooks.delete(hook.id);
const gone = await client.webhooks.get(hook.id).catch((e) => e);
check(gone instanceof NotFoundError, `a deleted endpoint is a 404, got ${gone}`);

console.log(
  `esm (Node ${process.versions.node}): ${events.total_count} events, experiment ${created.id} ${started.experiment.status} with ${started.warnings.length} warning(s); assignment preview, results, timeline and history; withResponse, idempotencyKey, abort and timeouts as documented; stream replayed ${replayed} events and resumed from its position; webhook endpoint created, listed and deleted, its secret verifying a signed message`,
);
