#!/usr/bin/env node
// KafkaJS (2.2.4, tests/kafkajs/package-lock.json) against a Samsa broker, for
// tests/integration/test_kafkajs.py. One subcommand per run:
//
//   node client.js SUBCOMMAND '{"brokers": ["127.0.0.1:PORT"], ...}'
//
// Every result is one JSON object per line on stdout ({"event": ...}), so the
// Python test reads what happened as it happens; KafkaJS's own log lines go
// to stderr. KafkaJS's defaults are kept everywhere except where a subcommand
// says why. A subcommand that runs until told to stop (consume-until-stopped,
// produce-stream) stops when its stdin is closed, so the test ends it without
// a signal and it disconnects cleanly.

'use strict'

const { Kafka, logLevel } = require('kafkajs')

function emit(event, fields = {}) {
  process.stdout.write(JSON.stringify({ event, ...fields }) + '\n')
}

function kafkaFor(args) {
  return new Kafka({
    clientId: args.clientId || 'samsa-kafkajs-test',
    brokers: args.brokers,
    logLevel: logLevel.WARN,
    // KafkaJS logs to stdout by default: stderr keeps stdout for the results.
    logCreator: () => ({ namespace, level, label, log }) =>
      process.stderr.write(`${label} [${namespace}] ${JSON.stringify(log)}\n`),
  })
}

// Resolves when stdin ends (the test closed it): the stop signal.
function stdinClosed() {
  return new Promise(resolve => {
    process.stdin.on('end', resolve)
    process.stdin.on('close', resolve)
    process.stdin.resume()
  })
}

function describeError(e) {
  return { name: e.name, message: e.message, retriable: e.retriable === true, type: e.type,
           cause: e.cause ? describeError(e.cause) : undefined }
}

function createTopic(client, args) {
  return client.createTopics({
    waitForLeaders: true,
    topics: [{ topic: args.topic, numPartitions: args.partitions,
               replicationFactor: args.replicationFactor || 1,
               configEntries: Object.entries(args.config || {}).map(([name, value]) => ({ name, value })) }],
  })
}

// createTopics only (a cluster: the test then waits until every node knows
// the topic, since KafkaJS asks a random broker for metadata and does not
// retry UNKNOWN_TOPIC_OR_PARTITION from one that has not applied it yet).
async function createTopicOnly(args) {
  const client = kafkaFor(args).admin()
  await client.connect()
  try {
    emit('created', { created: await createTopic(client, args) })
  } finally {
    await client.disconnect()
  }
}

async function admin(args) {
  const client = kafkaFor(args).admin()
  await client.connect()
  try {
    emit('created', { created: await createTopic(client, args) })
    // A second creation of the same name: KafkaJS returns false (TOPIC_ALREADY_EXISTS is not an error to it).
    const again = await client.createTopics({ topics: [{ topic: args.topic, numPartitions: args.partitions }] })
    emit('created-again', { created: again })
    emit('topics', { topics: await client.listTopics() })
    const metadata = await client.fetchTopicMetadata({ topics: [args.topic] })
    emit('metadata', {
      topics: metadata.topics.map(t => ({
        name: t.name,
        partitions: t.partitions.map(p => ({ partition: p.partitionId, leader: p.leader, replicas: p.replicas,
                                             isr: p.isr, errorCode: p.partitionErrorCode })),
      })),
    })
  } finally {
    await client.disconnect()
  }
}

// N records, record i to partition i % partitions, one send per batch of `batch`.
async function produce(args) {
  const producer = kafkaFor(args).producer()
  await producer.connect()
  try {
    const batch = args.batch || 50
    for (let first = 0; first < args.count; first += batch) {
      const messages = []
      for (let i = first; i < Math.min(args.count, first + batch); i++) {
        messages.push({ key: `key-${i}`, value: `${args.prefix || 'record'}-${i}`, partition: i % args.partitions })
      }
      const metadata = await producer.send({ topic: args.topic, acks: -1, messages })
      emit('acked', { records: messages.length,
                      partitions: metadata.map(m => ({ partition: m.partition, errorCode: m.errorCode,
                                                       baseOffset: m.baseOffset })) })
    }
  } finally {
    await producer.disconnect()
  }
}

function messageEvent(topic, partition, message) {
  return { topic, partition, offset: message.offset, key: message.key && message.key.toString(),
           value: message.value && message.value.toString() }
}

// A group member that reads until `expect` records are seen, or until
// `idleMs` pass without a record once it has its assignment (then it has
// read everything there is), then disconnects (KafkaJS commits what it
// read: autoCommit, its default, commits after each batch).
async function consumeGroup(args) {
  const consumer = kafkaFor(args).consumer({ groupId: args.group })
  let seen = 0
  let lastActivity = Date.now()
  let joined = false
  consumer.on(consumer.events.GROUP_JOIN, e => {
    joined = true
    lastActivity = Date.now()
    emit('joined', { memberAssignment: e.payload.memberAssignment })
  })
  await consumer.connect()
  await consumer.subscribe({ topics: [args.topic], fromBeginning: true })
  await consumer.run({
    eachMessage: async ({ topic, partition, message }) => {
      seen++
      lastActivity = Date.now()
      emit('message', messageEvent(topic, partition, message))
    },
  })
  const deadline = Date.now() + (args.timeoutMs || 30000)
  while (Date.now() < deadline) {
    if (args.expect !== undefined && seen >= args.expect) break
    if (args.idleMs && joined && Date.now() - lastActivity > args.idleMs) break
    await new Promise(r => setTimeout(r, 50))
  }
  await consumer.disconnect()
  emit('done', { seen })
}

// A group member that reports every assignment (GROUP_JOIN) and every record
// until stdin is closed: two of them show a rebalance.
async function consumeUntilStopped(args) {
  const consumer = kafkaFor(args).consumer({ groupId: args.group })
  consumer.on(consumer.events.GROUP_JOIN, e => emit('joined', { memberAssignment: e.payload.memberAssignment }))
  consumer.on(consumer.events.CRASH, e => emit('crash', { error: describeError(e.payload.error) }))
  await consumer.connect()
  await consumer.subscribe({ topics: [args.topic], fromBeginning: true })
  await consumer.run({
    eachMessage: async ({ topic, partition, message }) => emit('message', messageEvent(topic, partition, message)),
  })
  emit('running')
  await stdinClosed()
  await consumer.disconnect()
  emit('done')
}

// One record per send, in order, to one partition, until stdin is closed:
// each acknowledgement (its offset) or failed send is reported. The
// failover test kills the leader meanwhile. A send that fails once
// KafkaJS's own retries are spent is sent again, the same value, as an
// application would (the test judges each such failure). `idempotent`
// takes KafkaJS's required maxInFlightRequests 1 with it.
async function produceStream(args) {
  const options = args.idempotent ? { idempotent: true, maxInFlightRequests: 1 } : {}
  const producer = kafkaFor(args).producer(options)
  await producer.connect()
  emit('connected')
  let stopping = false
  stdinClosed().then(() => { stopping = true })
  let i = 0
  while (!stopping) {
    const value = `${args.prefix || 'record'}-${i}`
    const sentAt = Date.now()
    try {
      const [m] = await producer.send({ topic: args.topic, acks: -1, messages: [{ value, partition: 0 }] })
      emit('acked', { value, offset: m.baseOffset, errorCode: m.errorCode, ms: Date.now() - sentAt })
      i++
    } catch (e) {
      emit('failed', { value, error: describeError(e), ms: Date.now() - sentAt })
    }
  }
  await producer.disconnect()
  emit('done', { sent: i })
}

const subcommands = { admin, 'create-topic': createTopicOnly, produce, 'consume-group': consumeGroup, 'consume-until-stopped': consumeUntilStopped,
                      'produce-stream': produceStream }

async function main() {
  const [name, json] = process.argv.slice(2)
  const run = subcommands[name]
  if (!run) {
    process.stderr.write(`usage: client.js {${Object.keys(subcommands).join('|')}} JSON\n`)
    process.exit(2)
  }
  await run(JSON.parse(json || '{}'))
}

main().then(() => process.exit(0), e => {
  emit('error', { error: describeError(e) })
  process.stderr.write(`${e.stack}\n`)
  process.exit(1)
})
