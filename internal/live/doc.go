// Package live carries the stores' announcements (game.Notice: "this topic
// changed, here is change n") to the readers that follow them in this
// process, such as the server's Server-Sent Events streams.
//
// A Broker fans notices out in process. With the in-memory store it is the
// whole path (the store calls Publish as it writes); with PostgreSQL every
// replica runs Listen on its own dedicated connection, which receives what
// any replica's transactions sent with NOTIFY at their commit and publishes
// it to the replica's Broker. Readers see the same thing either way.
//
// Nothing here is the record: notices may be lost (a listener that
// reconnects, a reader too slow to keep up), so readers number what they
// have seen by Notice.Seq and read what they missed from the store. The
// package must never block a publisher, never hold more than a
// subscription's buffer of notices for one reader, and never read or write
// the store.
package live
