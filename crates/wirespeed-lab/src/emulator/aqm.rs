//! Active queue management for a link's output queue: CoDel (RFC 8289) and FQ-CoDel (RFC 8290).
//!
//! Pure logic: no I/O and no clock. Every call is given the present as nanoseconds on the
//! caller's clock (virtual time in tests, `CLOCK_MONOTONIC` in the lab), so the same code gives
//! the same drops in both. Packets carry a caller's payload `T` (the lab passes a tag that
//! names the frame's buffer); what the queue drops is handed back to the caller in a vector,
//! so that the buffer can be reused and the drop counted.
//!
//! CoDel decides at dequeue, not at enqueue (RFC 8289 section 3.1, the estimator): the signal is the *sojourn
//! time* of the packet leaving the queue, the time from its enqueue to its dequeue, and a packet
//! is dropped when that time has stayed above `target` for at least `interval`. Once dropping,
//! the next drop comes `interval / sqrt(count)` after the previous one (the control law, RFC 8289
//! section 3.3), so an unresponsive overload is brought under control only as fast as that
//! law lets the drop rate grow: the n-th drop of a dropping episode comes about
//! 2 x interval x sqrt(n) after its start.
//!
//! FQ-CoDel (RFC 8290 section 4) hashes each packet's 5-tuple, with a random perturbation of the
//! link's own (drawn when the lab starts, unless the topology sets one), to one of `flows` queues, each with its own CoDel state, and serves them by deficit round robin
//! with a `quantum` of bytes: queues that just became active ("new flows") are served before the
//! ones that stayed backlogged ("old flows"), which gives a sparse flow (a ping, a DNS query)
//! its packet out ahead of a bulk flow's standing queue. Past the packet limit it drops a batch
//! from the head of the queue with the most bytes, as Linux does; the queues that hold bytes are
//! kept in a heap ordered by backlog, so the fattest is found without visiting every queue.
//!
//! ECN marking is out of scope: every packet CoDel picks is dropped, and the ECN mark counter
//! is always 0 (the emulator does not rewrite IP headers).

use std::collections::VecDeque;

/// CoDel's default target: the acceptable standing queue delay (RFC 8289 section 4.3).
pub const DEFAULT_TARGET_NS: u64 = 5_000_000;
/// CoDel's default interval: a worst-case round trip (RFC 8289 section 4.2).
pub const DEFAULT_INTERVAL_NS: u64 = 100_000_000;
/// FQ-CoDel's default number of flow queues (RFC 8290's default, that of the Linux
/// implementation it describes).
pub const DEFAULT_FLOWS: u32 = 1024;
/// FQ-CoDel's default quantum: one full Ethernet frame without FCS (RFC 8290's default).
pub const DEFAULT_QUANTUM: u32 = 1514;
/// FQ-CoDel's default limit of packets in all queues together (RFC 8290's default).
pub const DEFAULT_LIMIT: u32 = 10240;
/// Most packets one overflow drops from the fattest queue (Linux's `drop_batch` default).
pub const DEFAULT_DROP_BATCH: u32 = 64;

/// CoDel's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodelParams {
    /// Acceptable standing queue delay, ns.
    pub target_ns: u64,
    /// Window over which the delay must stay above target before CoDel drops, ns.
    pub interval_ns: u64,
    /// The largest packet, bytes (RFC 8289's MAXPACKET, the link's MTU-sized packet): with no
    /// more than this many bytes left queued CoDel never drops, so that a slow link whose one
    /// packet takes longer than `target` to send stays busy (RFC 8289 section 4.1, non-starvation).
    pub mtu_bytes: u64,
}

impl Default for CodelParams {
    fn default() -> Self {
        CodelParams {
            target_ns: DEFAULT_TARGET_NS,
            interval_ns: DEFAULT_INTERVAL_NS,
            mtu_bytes: u64::from(DEFAULT_QUANTUM),
        }
    }
}

/// FQ-CoDel's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FqCodelParams {
    /// CoDel's parameters, the same for every flow queue.
    pub codel: CodelParams,
    /// Number of flow queues packets are hashed to.
    pub flows: u32,
    /// Bytes each queue may send per round (deficit round robin).
    pub quantum: u32,
    /// Most packets in all queues together; beyond it the fattest queue loses its head.
    pub limit: u32,
    /// Most packets one overflow drops from the fattest queue ([`FqCodel::drop_fattest`]).
    pub drop_batch: u32,
    /// The flow hash's perturbation (RFC 8290 section 4.1; Linux draws it at random for each
    /// instance): which flows share a queue depends on it, so a sender that does not know it
    /// cannot aim its flows at another flow's queue.
    pub perturbation: u64,
}

impl Default for FqCodelParams {
    fn default() -> Self {
        FqCodelParams {
            codel: CodelParams::default(),
            flows: DEFAULT_FLOWS,
            quantum: DEFAULT_QUANTUM,
            limit: DEFAULT_LIMIT,
            drop_batch: DEFAULT_DROP_BATCH,
            perturbation: 0,
        }
    }
}

/// A packet in a queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<T> {
    /// Its size in bytes (what DRR charges and the backlog counts).
    pub len: u64,
    /// When it was enqueued, ns.
    pub enqueued_ns: u64,
    /// Its flow hash ([`FlowKey::hash`]); CoDel alone ignores it.
    pub hash: u32,
    /// The caller's.
    pub payload: T,
}

/// What a queue has done so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AqmCounters {
    /// Packets enqueued.
    pub packets_in: u64,
    /// Bytes enqueued.
    pub bytes_in: u64,
    /// Packets dequeued (handed to the link).
    pub packets_out: u64,
    /// Bytes dequeued.
    pub bytes_out: u64,
    /// Packets CoDel dropped at dequeue.
    pub codel_drops: u64,
    /// Packets FQ-CoDel dropped from the head of the fattest queue because the limit was
    /// exceeded.
    pub overflow_drops: u64,
    /// Bytes dropped, both ways.
    pub bytes_dropped: u64,
    /// Packets marked with ECN CE instead of dropped: always 0 (not implemented).
    pub ecn_marks: u64,
}

/// The state of one CoDel instance (the per-queue variables of RFC 8289 section 5).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CodelVars {
    /// When the sojourn time will have been above target for a whole interval; `None` while
    /// it is below (the RFC's 0).
    first_above_time: Option<u64>,
    /// When the next drop is due, in the dropping state.
    drop_next: u64,
    /// Drops in this dropping episode (with the reuse rule, see [`CodelVars::dequeue`]).
    count: u32,
    /// `count` when the last episode began.
    lastcount: u32,
    /// In the dropping state.
    dropping: bool,
}

/// The queue one CoDel instance dequeues from: its own FIFO, or one flow queue of FQ-CoDel.
trait Source<T> {
    /// Takes the head packet.
    fn pop(&mut self) -> Option<Packet<T>>;
    /// Bytes still queued after the pop (the RFC's `bytes()` in `dodequeue`).
    fn backlog(&self) -> u64;
}

/// `t + interval / sqrt(count)`: when the next drop is due (RFC 8289 sections 3.3 and 5).
fn control_law(t: u64, interval_ns: u64, count: u32) -> u64 {
    let spacing = interval_ns as f64 / f64::from(count.max(1)).sqrt();
    t + spacing as u64
}

impl CodelVars {
    /// True in the dropping state.
    pub fn dropping(&self) -> bool {
        self.dropping
    }

    /// Drops in the current (or last) dropping episode.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// The RFC's `dodequeue`: takes the head packet and says whether it may be dropped, that is
    /// whether the sojourn time has been at or above target for a whole interval while more
    /// than one MTU stayed queued.
    fn dodequeue<T>(
        &mut self,
        p: &CodelParams,
        now: u64,
        q: &mut impl Source<T>,
    ) -> (Option<Packet<T>>, bool) {
        let Some(packet) = q.pop() else {
            // An empty queue is below target by definition.
            self.first_above_time = None;
            return (None, false);
        };
        let sojourn = now.saturating_sub(packet.enqueued_ns);
        let mut ok_to_drop = false;
        if sojourn < p.target_ns || q.backlog() <= p.mtu_bytes {
            // Below target, or too little left to keep the link busy (section 4.1): the
            // delay must again stay above target for a whole interval before a drop.
            self.first_above_time = None;
        } else {
            match self.first_above_time {
                None => self.first_above_time = Some(now + p.interval_ns),
                Some(t) if now >= t => ok_to_drop = true,
                Some(_) => {}
            }
        }
        (Some(packet), ok_to_drop)
    }

    /// The RFC's `dequeue` (section 5): the packet to send, if any; the packets CoDel dropped
    /// on the way are pushed onto `dropped`.
    fn dequeue<T>(
        &mut self,
        p: &CodelParams,
        now: u64,
        q: &mut impl Source<T>,
        dropped: &mut Vec<Packet<T>>,
    ) -> Option<Packet<T>> {
        let (mut packet, mut ok_to_drop) = self.dodequeue(p, now, q);
        if self.dropping {
            if !ok_to_drop {
                // The sojourn time went below target: leave the dropping state.
                self.dropping = false;
            }
            // Drop as many as are due: with a large backlog the control law may already be
            // past more than one drop time.
            while self.dropping && now >= self.drop_next {
                if let Some(victim) = packet.take() {
                    dropped.push(victim);
                }
                self.count = self.count.saturating_add(1);
                (packet, ok_to_drop) = self.dodequeue(p, now, q);
                if ok_to_drop {
                    self.drop_next = control_law(self.drop_next, p.interval_ns, self.count);
                } else {
                    self.dropping = false;
                }
            }
        } else if ok_to_drop {
            // Above target for a whole interval: drop this packet and enter the dropping state.
            if let Some(victim) = packet.take() {
                dropped.push(victim);
            }
            (packet, _) = self.dodequeue(p, now, q);
            self.dropping = true;
            // Count reuse (section 5's pseudocode, which takes it from Linux): an episode that starts soon after
            // the last one (drop_next is at most an interval after the last drop, so
            // now - drop_next approximates the time since it) resumes at the drop rate that
            // controlled the queue then, rather than from 1.
            let delta = self.count.wrapping_sub(self.lastcount);
            self.count = 1;
            let since = now as i128 - self.drop_next as i128;
            if delta > 1 && since < 16 * i128::from(p.interval_ns) {
                self.count = delta;
            }
            self.drop_next = control_law(now, p.interval_ns, self.count);
            self.lastcount = self.count;
        }
        packet
    }
}

/// A FIFO with its byte count.
#[derive(Debug, Clone)]
struct Fifo<T> {
    packets: VecDeque<Packet<T>>,
    bytes: u64,
}

impl<T> Default for Fifo<T> {
    fn default() -> Self {
        Fifo {
            packets: VecDeque::new(),
            bytes: 0,
        }
    }
}

impl<T> Source<T> for Fifo<T> {
    fn pop(&mut self) -> Option<Packet<T>> {
        let p = self.packets.pop_front()?;
        self.bytes -= p.len;
        Some(p)
    }

    fn backlog(&self) -> u64 {
        self.bytes
    }
}

/// One FIFO managed by CoDel (RFC 8289).
#[derive(Debug, Clone)]
pub struct Codel<T> {
    params: CodelParams,
    vars: CodelVars,
    fifo: Fifo<T>,
    counters: AqmCounters,
}

impl<T> Codel<T> {
    /// Empties the queue without dequeueing, CoDel's state and counters untouched: a test
    /// seam, so that a test can end a standing queue at once and see what CoDel does next.
    #[doc(hidden)]
    pub fn forget_queue(&mut self) {
        self.fifo = Fifo::default();
    }

    /// An empty queue.
    pub fn new(params: CodelParams) -> Self {
        Codel {
            params,
            vars: CodelVars::default(),
            fifo: Fifo::default(),
            counters: AqmCounters::default(),
        }
    }

    /// Adds a packet of `len` bytes at `now`, stamped for its sojourn time. CoDel itself never
    /// refuses one: the queue's hard limit is the caller's (RFC 8289 section 5's enqueue only
    /// stamps the packet).
    pub fn enqueue(&mut self, now: u64, len: u64, payload: T) {
        self.counters.packets_in += 1;
        self.counters.bytes_in += len;
        self.fifo.bytes += len;
        self.fifo.packets.push_back(Packet {
            len,
            enqueued_ns: now,
            hash: 0,
            payload,
        });
    }

    /// The packet to send at `now`, if any; what CoDel dropped first goes onto `dropped`.
    pub fn dequeue(&mut self, now: u64, dropped: &mut Vec<Packet<T>>) -> Option<Packet<T>> {
        let before = dropped.len();
        let packet = self
            .vars
            .dequeue(&self.params, now, &mut self.fifo, dropped);
        for d in &dropped[before..] {
            self.counters.codel_drops += 1;
            self.counters.bytes_dropped += d.len;
        }
        if let Some(p) = &packet {
            self.counters.packets_out += 1;
            self.counters.bytes_out += p.len;
        }
        packet
    }

    /// Packets queued.
    pub fn len(&self) -> usize {
        self.fifo.packets.len()
    }

    /// True when nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.fifo.packets.is_empty()
    }

    /// Bytes queued.
    pub fn bytes(&self) -> u64 {
        self.fifo.bytes
    }

    /// Counters so far.
    pub fn counters(&self) -> AqmCounters {
        self.counters
    }

    /// CoDel's state (for tests and status).
    pub fn vars(&self) -> &CodelVars {
        &self.vars
    }
}

/// Which list of FQ-CoDel's scheduler a flow queue is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum List {
    /// Neither: the queue is empty and inactive.
    None,
    /// New flows, served first.
    New,
    /// Old flows.
    Old,
}

#[derive(Debug, Clone)]
struct FlowQueue<T> {
    fifo: Fifo<T>,
    deficit: i64,
    vars: CodelVars,
    list: List,
}

/// A flow queue seen by its CoDel instance: pops update the scheduler's totals too, and the
/// backlog CoDel compares with one MTU is the total of all queues, as the Linux implementation
/// that RFC 8290 describes does (`sch->qstats.backlog`): what keeps the link busy is the whole
/// backlog, not one flow's share of it.
struct FlowSource<'a, T> {
    fifo: &'a mut Fifo<T>,
    total_len: &'a mut usize,
    total_bytes: &'a mut u64,
}

impl<T> Source<T> for FlowSource<'_, T> {
    fn pop(&mut self) -> Option<Packet<T>> {
        let p = self.fifo.pop()?;
        *self.total_len -= 1;
        *self.total_bytes -= p.len;
        Some(p)
    }

    fn backlog(&self) -> u64 {
        *self.total_bytes
    }
}

/// No place in [`BacklogHeap`]: the queue is empty.
const ABSENT: u32 = u32::MAX;

/// The flow queues that hold bytes, ordered by backlog: an indexed binary max-heap. The
/// fattest queue is at the top, and each enqueue or dequeue moves its queue by O(log n) steps,
/// so an overflow no longer scans every queue (with 65,536 queues the scan cost 101 us a frame
/// in the lab: issue 32). Ties go to the lower queue index, as a scan in index order would.
#[derive(Debug, Clone)]
struct BacklogHeap {
    /// (bytes, queue), the fattest first.
    heap: Vec<(u64, u32)>,
    /// Each queue's place in `heap`, or [`ABSENT`].
    place: Vec<u32>,
}

impl BacklogHeap {
    fn new(queues: usize) -> Self {
        BacklogHeap {
            heap: Vec::new(),
            place: vec![ABSENT; queues],
        }
    }

    /// The fattest queue and its bytes.
    fn top(&self) -> Option<(usize, u64)> {
        self.heap.first().map(|&(bytes, q)| (q as usize, bytes))
    }

    fn above(a: (u64, u32), b: (u64, u32)) -> bool {
        a.0 > b.0 || (a.0 == b.0 && a.1 < b.1)
    }

    /// Queue `queue` now holds `bytes`.
    fn set(&mut self, queue: usize, bytes: u64) {
        let at = self.place[queue];
        if at == ABSENT {
            if bytes > 0 {
                self.heap.push((bytes, queue as u32));
                let end = self.heap.len() - 1;
                self.place[queue] = end as u32;
                self.sift_up(end);
            }
            return;
        }
        let at = at as usize;
        if bytes == 0 {
            let end = self.heap.len() - 1;
            self.swap(at, end);
            self.heap.pop();
            self.place[queue] = ABSENT;
            if at < self.heap.len() {
                let at = self.sift_up(at);
                self.sift_down(at);
            }
        } else {
            let before = self.heap[at].0;
            self.heap[at].0 = bytes;
            if bytes > before {
                self.sift_up(at);
            } else {
                self.sift_down(at);
            }
        }
    }

    fn swap(&mut self, i: usize, j: usize) {
        self.heap.swap(i, j);
        self.place[self.heap[i].1 as usize] = i as u32;
        self.place[self.heap[j].1 as usize] = j as u32;
    }

    fn sift_up(&mut self, mut i: usize) -> usize {
        while i > 0 {
            let parent = (i - 1) / 2;
            if !Self::above(self.heap[i], self.heap[parent]) {
                break;
            }
            self.swap(i, parent);
            i = parent;
        }
        i
    }

    fn sift_down(&mut self, mut i: usize) {
        loop {
            let mut best = i;
            for child in [2 * i + 1, 2 * i + 2] {
                if child < self.heap.len() && Self::above(self.heap[child], self.heap[best]) {
                    best = child;
                }
            }
            if best == i {
                return;
            }
            self.swap(i, best);
            i = best;
        }
    }
}

/// FQ-CoDel (RFC 8290): flow queues served by deficit round robin, each managed by CoDel.
#[derive(Debug, Clone)]
pub struct FqCodel<T> {
    params: FqCodelParams,
    flows: Vec<FlowQueue<T>>,
    by_backlog: BacklogHeap,
    new_flows: VecDeque<usize>,
    old_flows: VecDeque<usize>,
    len: usize,
    bytes: u64,
    counters: AqmCounters,
}

impl<T> FqCodel<T> {
    /// An empty scheduler with `params.flows` queues (at least one).
    pub fn new(params: FqCodelParams) -> Self {
        let flows: Vec<FlowQueue<T>> = (0..params.flows.max(1))
            .map(|_| FlowQueue {
                fifo: Fifo::default(),
                deficit: 0,
                vars: CodelVars::default(),
                list: List::None,
            })
            .collect();
        FqCodel {
            params,
            by_backlog: BacklogHeap::new(flows.len()),
            flows,
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            len: 0,
            bytes: 0,
            counters: AqmCounters::default(),
        }
    }

    /// The queue a flow hash maps to: the hash scaled onto 0..flows (no modulo bias to speak
    /// of, and no division).
    pub fn queue_of(&self, hash: u32) -> usize {
        ((u64::from(hash) * self.flows.len() as u64) >> 32) as usize
    }

    /// Adds a packet of `len` bytes of flow `hash` at `now` (RFC 8290 section 4.1). A queue
    /// that was inactive joins the end of the new-flows list with a full quantum of credit. If
    /// the packets then exceed the limit, a batch from the head of the queue with the most bytes
    /// is dropped onto `dropped` ([`FqCodel::drop_fattest`]).
    pub fn enqueue(
        &mut self,
        now: u64,
        len: u64,
        hash: u32,
        payload: T,
        dropped: &mut Vec<Packet<T>>,
    ) {
        let i = self.queue_of(hash);
        self.counters.packets_in += 1;
        self.counters.bytes_in += len;
        let flow = &mut self.flows[i];
        flow.fifo.bytes += len;
        flow.fifo.packets.push_back(Packet {
            len,
            enqueued_ns: now,
            hash,
            payload,
        });
        if flow.list == List::None {
            flow.list = List::New;
            flow.deficit = i64::from(self.params.quantum);
            self.new_flows.push_back(i);
        }
        let backlog = flow.fifo.bytes;
        self.by_backlog.set(i, backlog);
        self.len += 1;
        self.bytes += len;
        while self.len > self.params.limit as usize {
            if !self.drop_fattest(dropped) {
                break;
            }
        }
    }

    /// Drops packets from the head of the queue holding the most bytes onto `dropped` (RFC 8290
    /// section 4.1: the overload that exceeds the limit is most likely that flow's doing): a
    /// batch, as Linux's `fq_codel_drop` does, until half that queue's bytes are gone or
    /// `drop_batch` packets (at least one), so that a sustained overload pays for finding the
    /// fattest queue once per batch rather than once per packet. False if everything is empty.
    /// The queue keeps its place in its list: the scheduler finds it empty when it next comes
    /// to it.
    pub fn drop_fattest(&mut self, dropped: &mut Vec<Packet<T>>) -> bool {
        let Some((i, backlog)) = self.by_backlog.top() else {
            return false;
        };
        let half = backlog / 2;
        let batch = self.params.drop_batch.max(1);
        let flow = &mut self.flows[i];
        let (mut packets, mut bytes) = (0, 0);
        while let Some(p) = flow.fifo.pop() {
            packets += 1;
            bytes += p.len;
            self.len -= 1;
            self.bytes -= p.len;
            self.counters.overflow_drops += 1;
            self.counters.bytes_dropped += p.len;
            dropped.push(p);
            if packets >= batch || bytes >= half {
                break;
            }
        }
        let left = flow.fifo.bytes;
        self.by_backlog.set(i, left);
        packets > 0
    }

    /// Each flow queue's bytes, by queue index: a test seam, so that a test can check
    /// [`FqCodel::fattest`]'s heap against a plain scan.
    #[doc(hidden)]
    pub fn backlogs(&self) -> Vec<u64> {
        self.flows.iter().map(|q| q.fifo.bytes).collect()
    }

    /// The queue holding the most bytes, and its bytes (the lowest index among equals).
    pub fn fattest(&self) -> Option<(usize, u64)> {
        self.by_backlog.top()
    }

    /// The packet to send at `now`, if any (RFC 8290 section 4.2); what CoDel dropped on the
    /// way goes onto `dropped`.
    pub fn dequeue(&mut self, now: u64, dropped: &mut Vec<Packet<T>>) -> Option<Packet<T>> {
        loop {
            // New flows first; a queue is served from the head of its list.
            let (i, from_new) = match self.new_flows.front() {
                Some(&i) => (i, true),
                None => (*self.old_flows.front()?, false),
            };
            let quantum = i64::from(self.params.quantum);
            // "Negative credits" in the RFC's words, "has already dequeued at least a quantum":
            // a deficit at or below zero, as Linux tests it.
            if self.flows[i].deficit <= 0 {
                // It has sent its quantum this round: more credit, and to the end of the old
                // flows, so a flow that stays backlogged gives up new-flow priority.
                self.flows[i].deficit += quantum;
                self.pop_list(from_new);
                self.old_flows.push_back(i);
                self.flows[i].list = List::Old;
                continue;
            }
            let before = dropped.len();
            let flow = &mut self.flows[i];
            let mut source = FlowSource {
                fifo: &mut flow.fifo,
                total_len: &mut self.len,
                total_bytes: &mut self.bytes,
            };
            let packet = flow
                .vars
                .dequeue(&self.params.codel, now, &mut source, dropped);
            let backlog = flow.fifo.bytes;
            self.by_backlog.set(i, backlog);
            for d in &dropped[before..] {
                self.counters.codel_drops += 1;
                self.counters.bytes_dropped += d.len;
            }
            let Some(packet) = packet else {
                // Empty. A new flow goes to the end of the old flows rather than straight
                // out, so that a flow cannot regain new-flow priority by emptying its queue
                // once per round; an old flow leaves the lists until its next packet.
                self.pop_list(from_new);
                if from_new {
                    self.old_flows.push_back(i);
                    self.flows[i].list = List::Old;
                } else {
                    self.flows[i].list = List::None;
                }
                continue;
            };
            self.flows[i].deficit -= packet.len as i64;
            self.counters.packets_out += 1;
            self.counters.bytes_out += packet.len;
            return Some(packet);
        }
    }

    fn pop_list(&mut self, new: bool) {
        if new {
            self.new_flows.pop_front();
        } else {
            self.old_flows.pop_front();
        }
    }

    /// Packets queued, all flows.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes queued, all flows.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Flow queues on the scheduler's lists (new and old): the flows it currently serves.
    pub fn active_flows(&self) -> usize {
        self.new_flows.len() + self.old_flows.len()
    }

    /// Flow queues on the new-flows list.
    pub fn new_flows(&self) -> usize {
        self.new_flows.len()
    }

    /// Counters so far.
    pub fn counters(&self) -> AqmCounters {
        self.counters
    }

    /// Packets and bytes in the queue of flow `hash`.
    pub fn flow_backlog(&self, hash: u32) -> (usize, u64) {
        let f = &self.flows[self.queue_of(hash)];
        (f.fifo.packets.len(), f.fifo.bytes)
    }
}

/// CoDel or FQ-CoDel behind one interface, for a link's output queue.
#[derive(Debug, Clone)]
pub enum Aqm<T> {
    /// One FIFO with CoDel.
    Codel(Codel<T>),
    /// Flow queues with CoDel each.
    FqCodel(FqCodel<T>),
}

impl<T> Aqm<T> {
    /// Adds a packet (the hash is ignored by CoDel alone); overflow drops go onto `dropped`.
    pub fn enqueue(
        &mut self,
        now: u64,
        len: u64,
        hash: u32,
        payload: T,
        dropped: &mut Vec<Packet<T>>,
    ) {
        match self {
            Aqm::Codel(c) => c.enqueue(now, len, payload),
            Aqm::FqCodel(f) => f.enqueue(now, len, hash, payload, dropped),
        }
    }

    /// The packet to send at `now`, if any; CoDel's drops go onto `dropped`.
    pub fn dequeue(&mut self, now: u64, dropped: &mut Vec<Packet<T>>) -> Option<Packet<T>> {
        match self {
            Aqm::Codel(c) => c.dequeue(now, dropped),
            Aqm::FqCodel(f) => f.dequeue(now, dropped),
        }
    }

    /// Packets queued.
    pub fn len(&self) -> usize {
        match self {
            Aqm::Codel(c) => c.len(),
            Aqm::FqCodel(f) => f.len(),
        }
    }

    /// True when nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes queued.
    pub fn bytes(&self) -> u64 {
        match self {
            Aqm::Codel(c) => c.bytes(),
            Aqm::FqCodel(f) => f.bytes(),
        }
    }

    /// Flows being served: the active flow queues of FQ-CoDel; CoDel's one FIFO counts as one
    /// while it holds packets.
    pub fn active_flows(&self) -> usize {
        match self {
            Aqm::Codel(c) => usize::from(!c.is_empty()),
            Aqm::FqCodel(f) => f.active_flows(),
        }
    }

    /// Counters so far.
    pub fn counters(&self) -> AqmCounters {
        match self {
            Aqm::Codel(c) => c.counters(),
            Aqm::FqCodel(f) => f.counters(),
        }
    }
}

/// What FQ-CoDel hashes: protocol, addresses and ports (RFC 8290 section 4.1). Frames that
/// are not IP hash on their EtherType alone; IPv4 fragments after the first, protocols without
/// ports, and IPv6 packets with extension headers (which are not followed) on protocol and
/// addresses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct FlowKey {
    /// EtherType (0x0800, 0x86dd, or another for non-IP frames).
    pub ethertype: u16,
    /// IP protocol (next header).
    pub protocol: u8,
    /// Source address (IPv4 in the first 4 bytes).
    pub src: [u8; 16],
    /// Destination address.
    pub dst: [u8; 16],
    /// Source port (TCP, UDP, UDP-Lite, SCTP, DCCP).
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
}

/// IP protocols whose first four bytes are source and destination port.
fn has_ports(protocol: u8) -> bool {
    matches!(protocol, 6 | 17 | 33 | 132 | 136)
}

fn ports(l4: &[u8]) -> (u16, u16) {
    match l4 {
        [a, b, c, d, ..] => (u16::from_be_bytes([*a, *b]), u16::from_be_bytes([*c, *d])),
        _ => (0, 0),
    }
}

impl FlowKey {
    /// The key of an Ethernet frame as a TAP device hands it over (no preamble, no FCS).
    /// 802.1Q and 802.1ad tags are skipped; a short or malformed frame gives what could be read.
    pub fn of_frame(frame: &[u8]) -> FlowKey {
        let mut key = FlowKey::default();
        let mut at = 12;
        let Some(mut ethertype) = frame
            .get(at..at + 2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
        else {
            return key;
        };
        while matches!(ethertype, 0x8100 | 0x88a8) {
            at += 4;
            match frame.get(at..at + 2) {
                Some(b) => ethertype = u16::from_be_bytes([b[0], b[1]]),
                None => return key,
            }
        }
        key.ethertype = ethertype;
        let ip = &frame[(at + 2).min(frame.len())..];
        match ethertype {
            0x0800 if ip.len() >= 20 => {
                let ihl = usize::from(ip[0] & 0x0f) * 4;
                key.protocol = ip[9];
                key.src[..4].copy_from_slice(&ip[12..16]);
                key.dst[..4].copy_from_slice(&ip[16..20]);
                let fragment_offset = u16::from_be_bytes([ip[6], ip[7]]) & 0x1fff;
                if fragment_offset == 0 && has_ports(key.protocol) && ihl >= 20 {
                    (key.src_port, key.dst_port) = ports(ip.get(ihl..).unwrap_or(&[]));
                }
            }
            0x86dd if ip.len() >= 40 => {
                key.protocol = ip[6];
                key.src.copy_from_slice(&ip[8..24]);
                key.dst.copy_from_slice(&ip[24..40]);
                if has_ports(key.protocol) {
                    (key.src_port, key.dst_port) = ports(&ip[40..]);
                }
            }
            _ => {}
        }
        key
    }

    /// The key's hash under `seed` (the link's perturbation): each 64-bit word of the key is
    /// folded in through the SplitMix64 finalizer (Steele, Lea and Flood, OOPSLA 2014), which
    /// mixes every input bit into every output bit; the seed makes the flow-to-queue mapping
    /// differ per link and, drawn at random, unknown to the senders.
    pub fn hash(&self, seed: u64) -> u32 {
        fn mix(mut z: u64) -> u64 {
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
        let word = |b: &[u8]| u64::from_be_bytes(b.try_into().expect("8 bytes"));
        let words = [
            u64::from(self.ethertype) << 32
                | u64::from(self.protocol) << 48
                | u64::from(self.src_port) << 16
                | u64::from(self.dst_port),
            word(&self.src[..8]),
            word(&self.src[8..]),
            word(&self.dst[..8]),
            word(&self.dst[8..]),
        ];
        let mut h = mix(seed ^ 0x9e37_79b9_7f4a_7c15);
        for w in words {
            h = mix(h ^ w);
        }
        (h >> 32) as u32
    }
}
