// Package shard holds what volbind's sharded structures share: one seeded
// string hash (Hasher) and one padded shard type (Padded), so that every
// lock-striped map picks its shard and keeps its shards' locks apart the
// same way.
//
// Resync offsets (package jitter) need a hash that is the same in every
// process and are the one exception: a Hasher is seeded per structure, so
// that keys chosen by a tenant (claim names) cannot be made to collide.
package shard
