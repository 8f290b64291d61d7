//! A group of experts over the ranks of a communicator: the token buffers every routing
//! shares, and dispatch and combine on a stream.

use std::sync::atomic::{AtomicU64, Ordering};

use super::buffers::{
    check_holds, copy_from_buffer, copy_into_buffer, TokenBuffer, TokenBufferMut,
};
use super::config::{check_top_k, DispatchFormat, MoeConfig, MoeError, MoeMode};
use super::fp8::scales_per_token;
use super::handle::MoeHandle;
use super::high_throughput::{
    high_throughput_combine, high_throughput_dispatch, high_throughput_layout,
};
use super::low_latency::{
    low_latency_combine, low_latency_dispatch, low_latency_dispatch_complete,
    low_latency_dispatch_send,
};
use super::ranks::{MoeRanks, SymmetricTensor};
use super::shape::MoeShape;
use cudajit::{bf16, Stream};
use cudajit_nccl_device::Window;

static NEXT_GROUP: AtomicU64 = AtomicU64::new(1);

/// Experts spread over the ranks of a communicator (`experts / ranks` on each), with the
/// buffers dispatch and combine move tokens through (symmetric windows, allocated once
/// for the group's limits):
///
/// | buffer | per rank |
/// | --- | --- |
/// | [`tokens`](MoeGroup::tokens) | `[max tokens × hidden]`: the rank's tokens, dispatch's input |
/// | [`received`](MoeGroup::received) | low latency: `[local experts × ranks × max tokens × hidden]`, row [`received_row`](MoeGroup::received_row)`(e, source, slot)`; high throughput: `[ranks × max tokens × hidden]`, the first received tokens' rows; FP8 dispatch: [`received_fp8`](MoeGroup::received_fp8) instead |
/// | [`expert_output`](MoeGroup::expert_output) | the same layout (bf16): what the experts made of it, combine's input |
/// | [`combined`](MoeGroup::combined) | `[max tokens × hidden]`: combine's output |
///
/// Each routing has a [`MoeHandle`] ([`MoeGroup::handle`]). Every launch is one local
/// rank's (`i`), on that rank's stream; as with every LSA kernel, every rank must launch
/// the same sequence, and in one process over several GPUs all ranks launch before any
/// is waited on.
/// What dispatch delivers, in the group's dispatch format.
enum Received {
    Bf16(SymmetricTensor<bf16>),
    Fp8 {
        values: SymmetricTensor<u8>,
        scales: SymmetricTensor<f32>,
    },
}

pub struct MoeGroup<'a> {
    ranks: MoeRanks<'a>,
    config: MoeConfig,
    serial: u64,
    tokens: SymmetricTensor<bf16>,
    received: Received,
    expert_output: SymmetricTensor<bf16>,
    combined: SymmetricTensor<bf16>,
}

impl std::fmt::Debug for MoeGroup<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MoeGroup")
            .field("config", &self.config)
            .field("ranks", &self.ranks.nranks())
            .finish_non_exhaustive()
    }
}

impl<'a> MoeGroup<'a> {
    /// A group over `ranks` with the limits of `config`, checked here: experts a multiple
    /// of the ranks, every size positive, the grid, every rank in one LSA team and an LSA
    /// barrier per CTA.
    pub fn new(ranks: MoeRanks<'a>, config: MoeConfig) -> Result<Self, MoeError> {
        config.check(ranks.nranks())?;
        ranks.check(config.ctas, "MoeConfig::requirements()")?;
        let rows = config.max_tokens_per_rank * config.hidden;
        // Low latency: a block per (expert, source); high throughput: each source's
        // tokens at most once.
        let received = match config.mode {
            MoeMode::LowLatency => config.experts * rows,
            MoeMode::HighThroughput => ranks.nranks() * rows,
        };
        Ok(MoeGroup {
            ranks,
            config,
            serial: NEXT_GROUP.fetch_add(1, Ordering::Relaxed),
            tokens: ranks.alloc(rows)?,
            received: match config.dispatch_format {
                DispatchFormat::Bf16 => Received::Bf16(ranks.alloc(received)?),
                DispatchFormat::Fp8E4m3 => Received::Fp8 {
                    values: ranks.alloc(received)?,
                    scales: ranks
                        .alloc(received / config.hidden * scales_per_token(config.hidden))?,
                },
            },
            expert_output: ranks.alloc(received)?,
            combined: ranks.alloc(rows)?,
        })
    }

    pub fn config(&self) -> &MoeConfig {
        &self.config
    }

    pub fn ranks(&self) -> MoeRanks<'a> {
        self.ranks
    }

    /// Experts on each rank.
    pub fn experts_per_rank(&self) -> usize {
        self.config.experts / self.ranks.nranks()
    }

    /// Local rank `i`'s stream (its CUDA context's default stream, or its simulated
    /// rank's).
    pub fn stream(&self, i: usize) -> Result<Stream, MoeError> {
        Ok(self.ranks.stream(i)?)
    }

    /// The tokens each rank dispatches, `[max tokens × hidden]`.
    pub fn tokens(&self) -> &SymmetricTensor<bf16> {
        &self.tokens
    }

    /// What dispatch delivered with the dispatch format `Bf16`: `[local experts × ranks ×
    /// max tokens × hidden]` (low latency) or `[ranks × max tokens × hidden]` (high
    /// throughput).
    pub fn received(&self) -> Result<&SymmetricTensor<bf16>, MoeError> {
        match &self.received {
            Received::Bf16(tokens) => Ok(tokens),
            Received::Fp8 { .. } => Err(self.wrong_format("received")),
        }
    }

    /// What dispatch delivered with the dispatch format `Fp8E4m3`: the e4m3 bytes, laid
    /// out as [`MoeGroup::received`] is, and `f32` scales, one per row and 128 channels
    /// (`[rows × ceil(hidden / 128)]`; [`super::fp8`]).
    pub fn received_fp8(&self) -> Result<(&SymmetricTensor<u8>, &SymmetricTensor<f32>), MoeError> {
        match &self.received {
            Received::Fp8 { values, scales } => Ok((values, scales)),
            Received::Bf16(_) => Err(self.wrong_format("received_fp8")),
        }
    }

    fn wrong_format(&self, buffer: &'static str) -> MoeError {
        MoeError::WrongFormat {
            buffer,
            format: self.config.dispatch_format,
        }
    }

    /// The received tokens' window and their scales' (the tokens' own when they are
    /// `bf16`: the kernels do not read it then), as kernel parameters.
    fn received_windows(&self, i: usize) -> Result<(Window, Window), MoeError> {
        match &self.received {
            Received::Bf16(tokens) => Ok((tokens.window(i)?, tokens.window(i)?)),
            Received::Fp8 { values, scales } => Ok((values.window(i)?, scales.window(i)?)),
        }
    }

    fn fp8(&self) -> bool {
        self.config.dispatch_format == DispatchFormat::Fp8E4m3
    }

    /// The experts' outputs combine reads, laid out as [`MoeGroup::received`].
    pub fn expert_output(&self) -> &SymmetricTensor<bf16> {
        &self.expert_output
    }

    /// Combine's output, `[max tokens × hidden]`.
    pub fn combined(&self) -> &SymmetricTensor<bf16> {
        &self.combined
    }

    /// The element where row `slot` of source rank `source` starts in local expert
    /// `local_expert`'s part of [`MoeGroup::received`] (and of the expert outputs) of a
    /// low-latency group.
    pub fn received_row(&self, local_expert: usize, source: usize, slot: usize) -> usize {
        ((local_expert * self.ranks.nranks() + source) * self.config.max_tokens_per_rank + slot)
            * self.config.hidden
    }

    /// A handle for routings of `top_k` experts per token (1 to 8), with its own
    /// symmetric buffers: the routing, the slots dispatch chose and the received counts.
    pub fn handle(&self, top_k: usize) -> Result<MoeHandle, MoeError> {
        check_top_k(top_k)?;
        MoeHandle::new(
            self.serial,
            self.ranks,
            self.config.mode,
            self.config.max_tokens_per_rank,
            self.config.experts,
            top_k,
        )
    }

    /// Dispatch on local rank `i`. Low latency: every token of `handle`'s routing written
    /// into its experts' slots of [`MoeGroup::received`] on their ranks, and the counts
    /// into `handle`'s. High throughput (after [`MoeGroup::layout`]): every token once
    /// into each rank holding one of its experts, at its place in the layout, with its
    /// local top-k indices and weights. What arrives is complete when the kernel ends on
    /// this rank (its last barrier waits for every peer's sends).
    pub fn dispatch(&self, i: usize, stream: &Stream, handle: &MoeHandle) -> Result<(), MoeError> {
        let shape = self.shape(i, stream, handle)?;
        if self.config.mode == MoeMode::HighThroughput {
            return self.high_throughput_dispatch(i, stream, handle, shape);
        }
        let (received, scales) = self.received_windows(i)?;
        low_latency_dispatch::launch(
            stream,
            self.config.launch_config(),
            self.ranks.dev_comm(i)?,
            self.tokens.window(i)?,
            handle.topk_idx().window(i)?,
            handle.slots()?.window(i)?,
            received,
            scales,
            handle.received_counts().window(i)?,
            handle.expert_counts().window(i)?,
            shape,
            self.fp8(),
        )?;
        Ok(())
    }

    /// The send half of [`MoeGroup::dispatch`]: the sends start, and the stream is free for
    /// other work (an expert's compute on what arrived before) until
    /// [`MoeGroup::dispatch_complete`], after which the received data is visible.
    pub fn dispatch_send(
        &self,
        i: usize,
        stream: &Stream,
        handle: &MoeHandle,
    ) -> Result<(), MoeError> {
        self.low_latency_only("dispatch_send")?;
        let shape = self.shape(i, stream, handle)?;
        let (received, scales) = self.received_windows(i)?;
        low_latency_dispatch_send::launch(
            stream,
            self.config.launch_config(),
            self.ranks.dev_comm(i)?,
            self.tokens.window(i)?,
            handle.topk_idx().window(i)?,
            handle.slots()?.window(i)?,
            received,
            scales,
            handle.received_counts().window(i)?,
            shape,
            self.fp8(),
        )?;
        Ok(())
    }

    /// The completion of [`MoeGroup::dispatch_send`]: an LSA barrier after which every
    /// peer's sends are visible on this rank, then the totals per local expert.
    pub fn dispatch_complete(
        &self,
        i: usize,
        stream: &Stream,
        handle: &MoeHandle,
    ) -> Result<(), MoeError> {
        self.low_latency_only("dispatch_complete")?;
        self.shape(i, stream, handle)?;
        low_latency_dispatch_complete::launch(
            stream,
            self.config.launch_config(),
            self.ranks.dev_comm(i)?,
            handle.received_counts().window(i)?,
            handle.expert_counts().window(i)?,
            self.config.experts as u64,
        )?;
        Ok(())
    }

    /// Combine on local rank `i`, into [`MoeGroup::combined`]. Low latency: each token of
    /// `handle`'s routing becomes the sum of its experts' outputs (read from
    /// [`MoeGroup::expert_output`] on their ranks, at the slots the last dispatch of
    /// `handle` chose) times its top-k weights. High throughput: the sum of its rows of
    /// `expert_output` on the ranks it went to (each rank's result for it). Every rank's
    /// experts must have written their outputs before its combine starts (stream order).
    pub fn combine(&self, i: usize, stream: &Stream, handle: &MoeHandle) -> Result<(), MoeError> {
        let shape = self.shape(i, stream, handle)?;
        if self.config.mode == MoeMode::HighThroughput {
            return self.high_throughput_combine(i, stream, handle, shape, false);
        }
        low_latency_combine::launch(
            stream,
            self.config.launch_config(),
            self.ranks.dev_comm(i)?,
            self.expert_output.window(i)?,
            handle.topk_idx().window(i)?,
            handle.topk_weights().window(i)?,
            handle.slots()?.window(i)?,
            self.combined.window(i)?,
            shape,
        )?;
        Ok(())
    }

    /// [`MoeGroup::dispatch`] of the routing's tokens in `tokens` (`[tokens × hidden]`,
    /// GPU memory for a group on GPUs, simulator memory for a simulated one): copied on
    /// `stream` into [`MoeGroup::tokens`], device to device, then dispatched.
    pub fn dispatch_from<'b>(
        &self,
        i: usize,
        stream: &Stream,
        handle: &MoeHandle,
        tokens: impl Into<TokenBuffer<'b>>,
    ) -> Result<(), MoeError> {
        self.copy_tokens(i, stream, handle, tokens.into())?;
        self.dispatch(i, stream, handle)
    }

    /// [`MoeGroup::dispatch_send`] of the tokens in `tokens` (as
    /// [`MoeGroup::dispatch_from`]).
    pub fn dispatch_send_from<'b>(
        &self,
        i: usize,
        stream: &Stream,
        handle: &MoeHandle,
        tokens: impl Into<TokenBuffer<'b>>,
    ) -> Result<(), MoeError> {
        self.low_latency_only("dispatch_send_from")?;
        self.copy_tokens(i, stream, handle, tokens.into())?;
        self.dispatch_send(i, stream, handle)
    }

    /// Copies the first `tokens × hidden` elements of `tokens` into local rank `i`'s
    /// [`MoeGroup::tokens`] on `stream`, after checking the launch that follows.
    fn copy_tokens(
        &self,
        i: usize,
        stream: &Stream,
        handle: &MoeHandle,
        tokens: TokenBuffer<'_>,
    ) -> Result<(), MoeError> {
        let shape = self.shape(i, stream, handle)?;
        let count = self.check_tokens_buffer("tokens buffer", tokens.len(), shape)?;
        copy_from_buffer(&self.tokens, i, stream, tokens, count, "tokens buffer")
    }

    /// [`MoeGroup::combine`] of the experts' outputs in `expert_output`, laid out as
    /// [`MoeGroup::expert_output`], copied on `stream` into that window (device to
    /// device) first. Low latency: all of it (`[local experts × ranks × max tokens ×
    /// hidden]`, rows at the slots dispatch chose). High throughput: the received tokens'
    /// rows (`[received tokens × hidden]`, `handle.read_received_tokens(i)` of them; a
    /// longer buffer's first `[ranks × max tokens × hidden]`). A high-throughput buffer
    /// shorter than the window is checked against the received tokens, which this reads
    /// from the device after synchronising `stream` (so on GPUs driven from one process,
    /// every rank's layout must have been launched first, as for `read_received_tokens`).
    pub fn combine_from<'b>(
        &self,
        i: usize,
        stream: &Stream,
        handle: &MoeHandle,
        expert_output: impl Into<TokenBuffer<'b>>,
    ) -> Result<(), MoeError> {
        let expert_output = expert_output.into();
        self.shape(i, stream, handle)?;
        let count = self.expert_output_copied(expert_output.len())?;
        if count < self.expert_output.len() {
            // Fewer rows than the window has: they must cover every received token, or
            // the combine would read the rows of an earlier round.
            stream.synchronize()?;
            let received = handle.read_received_tokens(i)?;
            let hidden = self.config.hidden;
            let rule = format!(
                "the received tokens' rows, received tokens × hidden ({received} × {hidden})"
            );
            check_holds("expert output buffer", count, received * hidden, &rule)?;
        }
        copy_from_buffer(
            &self.expert_output,
            i,
            stream,
            expert_output,
            count,
            "expert output buffer",
        )?;
        self.combine(i, stream, handle)
    }

    /// The elements [`MoeGroup::combine_from`] copies of a buffer of `len`.
    fn expert_output_copied(&self, len: usize) -> Result<usize, MoeError> {
        let window = self.expert_output.len();
        match self.config.mode {
            MoeMode::LowLatency => {
                check_holds(
                    "expert output buffer",
                    len,
                    window,
                    "the group's expert_output() per rank",
                )?;
                Ok(window)
            }
            MoeMode::HighThroughput => {
                if !len.is_multiple_of(self.config.hidden) {
                    return Err(MoeError::mismatch(
                        "expert output buffer",
                        len,
                        format!(
                            "it must hold whole rows of the received tokens, received tokens × hidden ({})",
                            self.config.hidden
                        ),
                    ));
                }
                Ok(len.min(window))
            }
        }
    }

    /// [`MoeGroup::combine`], then the combined tokens (`[tokens × hidden]`) copied on
    /// `stream` from [`MoeGroup::combined`] into `combined`, device to device: they are
    /// there once the stream has run the combine (on simulated ranks, once every rank
    /// has launched it).
    pub fn combine_into<'b>(
        &self,
        i: usize,
        stream: &Stream,
        handle: &MoeHandle,
        combined: impl Into<TokenBufferMut<'b>>,
    ) -> Result<(), MoeError> {
        let combined = combined.into();
        let shape = self.shape(i, stream, handle)?;
        // Checked before the launch: nothing runs for a buffer too short.
        let count = self.check_tokens_buffer("combined buffer", combined.len(), shape)?;
        self.combine(i, stream, handle)?;
        copy_into_buffer(
            &self.combined,
            i,
            stream,
            combined,
            count,
            "combined buffer",
        )
    }

    /// The elements of a routing's tokens, `tokens × hidden`, after checking that a
    /// caller's buffer of `len` holds them.
    fn check_tokens_buffer(
        &self,
        buffer: &'static str,
        len: usize,
        shape: MoeShape,
    ) -> Result<usize, MoeError> {
        let count = (shape.tokens * shape.hidden) as usize;
        let rule = format!("tokens × hidden ({} × {})", shape.tokens, shape.hidden);
        check_holds(buffer, len, count, &rule)?;
        Ok(count)
    }

    /// The layout pass of a high-throughput group on local rank `i`: counts and places
    /// `handle`'s tokens per destination rank, and gives every rank its received counts,
    /// offsets and tokens per local expert. Every dispatch and combine of the routing
    /// uses it (launch it again after a new routing).
    pub fn layout(
        &self,
        i: usize,
        stream: &Stream,
        handle: &mut MoeHandle,
    ) -> Result<(), MoeError> {
        let shape = self.shape_for(i, stream, handle, false)?;
        let layout = handle.high_throughput("layout")?;
        high_throughput_layout::launch(
            stream,
            self.config.launch_config(),
            self.ranks.dev_comm(i)?,
            handle.topk_idx().window(i)?,
            layout.positions.window(i)?,
            handle.received_counts().window(i)?,
            layout.source_expert_counts.window(i)?,
            handle.expert_counts().window(i)?,
            layout.received_offsets.window(i)?,
            shape,
        )?;
        handle.set_laid_out(i);
        Ok(())
    }

    /// The backward form of a high-throughput combine on local rank `i`: the combine of
    /// [`MoeGroup::expert_output`] (gradients of the received tokens) into
    /// [`MoeGroup::combined`], and of `handle.received_topk_weights()` (gradients of the
    /// received weights) into `handle.combined_weights()`: per token and `j`, the sum over
    /// the ranks it went to, in rank order.
    pub fn combine_backward(
        &self,
        i: usize,
        stream: &Stream,
        handle: &MoeHandle,
    ) -> Result<(), MoeError> {
        if self.config.mode != MoeMode::HighThroughput {
            return Err(MoeError::WrongMode {
                operation: "combine_backward",
                mode: self.config.mode,
            });
        }
        let shape = self.shape(i, stream, handle)?;
        self.high_throughput_combine(i, stream, handle, shape, true)
    }

    fn high_throughput_dispatch(
        &self,
        i: usize,
        stream: &Stream,
        handle: &MoeHandle,
        shape: MoeShape,
    ) -> Result<(), MoeError> {
        let layout = handle.high_throughput("dispatch")?;
        let (received, scales) = self.received_windows(i)?;
        high_throughput_dispatch::launch(
            stream,
            self.config.launch_config(),
            self.ranks.dev_comm(i)?,
            self.tokens.window(i)?,
            handle.topk_idx().window(i)?,
            handle.topk_weights().window(i)?,
            layout.positions.window(i)?,
            layout.received_offsets.window(i)?,
            received,
            scales,
            layout.received_topk_idx.window(i)?,
            layout.received_topk_weights.window(i)?,
            shape,
            self.fp8(),
        )?;
        Ok(())
    }

    fn high_throughput_combine(
        &self,
        i: usize,
        stream: &Stream,
        handle: &MoeHandle,
        shape: MoeShape,
        with_weights: bool,
    ) -> Result<(), MoeError> {
        let layout = handle.high_throughput("combine")?;
        high_throughput_combine::launch(
            stream,
            self.config.launch_config(),
            self.ranks.dev_comm(i)?,
            self.expert_output.window(i)?,
            layout.positions.window(i)?,
            layout.received_offsets.window(i)?,
            self.combined.window(i)?,
            layout.received_topk_weights.window(i)?,
            layout.combined_weights.window(i)?,
            shape,
            with_weights,
        )?;
        Ok(())
    }

    fn low_latency_only(&self, operation: &'static str) -> Result<(), MoeError> {
        if self.config.mode != MoeMode::LowLatency {
            return Err(MoeError::WrongMode {
                operation,
                mode: self.config.mode,
            });
        }
        Ok(())
    }

    /// The launch's dimensions, after checking that local rank `i`, `stream` and `handle`
    /// belong to this group and the routing fits it.
    fn shape(&self, i: usize, stream: &Stream, handle: &MoeHandle) -> Result<MoeShape, MoeError> {
        let laid_out = self.config.mode == MoeMode::HighThroughput;
        self.shape_for(i, stream, handle, laid_out)
    }

    /// [`MoeGroup::shape`], and with `laid_out` the check that the routing's layout pass
    /// was launched.
    fn shape_for(
        &self,
        i: usize,
        stream: &Stream,
        handle: &MoeHandle,
        laid_out: bool,
    ) -> Result<MoeShape, MoeError> {
        self.ranks.check_local(i)?;
        self.ranks.check_stream(i, stream, "MoeGroup::stream(i)")?;
        if handle.group() != self.serial {
            return Err(MoeError::mismatch(
                "handle",
                handle.group() as usize,
                format!(
                    "the handle must come from this group (group {}): MoeGroup::handle",
                    self.serial
                ),
            ));
        }
        let tokens = handle
            .tokens(i)
            .ok_or(MoeError::NoRouting { local_rank: i })?;
        if laid_out && !handle.laid_out(i) {
            return Err(MoeError::NoLayout { local_rank: i });
        }
        if tokens > self.config.max_tokens_per_rank {
            return Err(MoeError::mismatch(
                "tokens",
                tokens,
                format!(
                    "the group holds at most {} per rank (MoeConfig::max_tokens_per_rank)",
                    self.config.max_tokens_per_rank
                ),
            ));
        }
        Ok(MoeShape {
            tokens: tokens as u64,
            top_k: handle.top_k() as u64,
            hidden: self.config.hidden as u64,
            max_tokens: self.config.max_tokens_per_rank as u64,
            experts: self.config.experts as u64,
        })
    }

    /// Releases the group's buffers now (on GPUs; simulated ones go with their world).
    pub fn close(self) -> Result<(), MoeError> {
        self.tokens.close()?;
        match self.received {
            Received::Bf16(tokens) => tokens.close()?,
            Received::Fp8 { values, scales } => {
                values.close()?;
                scales.close()?;
            }
        }
        self.expert_output.close()?;
        Ok(self.combined.close()?)
    }
}
