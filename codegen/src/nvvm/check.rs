//! Writing run-time checks: bounds checks that print the index and length, and the
//! device-side assertion that stops the kernel.

use cudajit_core::Span;

use super::function::Writer;

impl Writer<'_> {
    /// Where a check inside this function reports: `span`, or the statement's when the
    /// expression's is unknown, in the function's own file (a device function of another
    /// crate has its own), as the simulator's reports do.
    fn check_location(&self, span: Span) -> (&str, Span) {
        let span = if span.is_known() {
            span
        } else {
            self.statement_span
        };
        let file = if self.function.file.is_empty() {
            &self.options.file
        } else {
            &self.function.file
        };
        (file, span)
    }

    /// The place a failed check names, in the simulator's words: `kernel `k`, at
    /// file:line:column`, then ` in `f`` inside a device function. Written into a `printf`
    /// format, so `%` is doubled.
    fn check_site(&self, span: Span) -> String {
        let (file, span) = self.check_location(span);
        // A module holds one kernel and the device functions it calls.
        let kernel = self
            .module
            .entry_points
            .first()
            .map_or(self.function.name.as_str(), |entry| entry.symbol.as_str());
        let mut site = format!("kernel `{kernel}`, at {file}:{span}");
        if self.symbol != kernel {
            site.push_str(&format!(" in `{}`", self.function.name));
        }
        site.replace('%', "%%")
    }

    /// Stops the kernel through CUDA's device-side assertion (`__assertfail`): the driver
    /// prints the message with the kernel, file, line, block and thread, and the host sees
    /// `CUDA_ERROR_ASSERT`.
    pub(super) fn trap(&mut self, message: &str, span: Span) {
        let message = self.string_constant(message);
        let (file, span) = self.check_location(span);
        let file = file.to_owned();
        let file = self.string_constant(&file);
        let function = self.function.name.clone();
        let function = self.string_constant(&function);
        self.declare("declare void @__assertfail(i8*, i8*, i32, i8*, i64)".into());
        self.line(format!(
            "call void @__assertfail(i8* {message}, i8* {file}, i32 {}, i8* {function}, i64 1)",
            span.line
        ));
    }

    /// With bounds checks on: if `index >= length`, print both and trap.
    pub(super) fn bounds_check(&mut self, index: &str, length: &str, span: Span) {
        if !self.options.bounds_checks {
            return;
        }
        let outside = self.value(format!("icmp uge i64 {index}, {length}"));
        let fail = self.label("bounds.fail");
        let ok = self.label("bounds.ok");
        self.line(format!("br i1 {outside}, label %{fail}, label %{ok}"));
        self.terminated = true;
        self.start(&fail);
        let text = format!(
            "{}: index out of bounds: the len is %llu but the index is %llu\n",
            self.check_site(span)
        );
        let format = self.string_constant(&text);
        self.declare("declare i32 @vprintf(i8*, i8*) nounwind".into());
        let storage = self.value("alloca { i64, i64 }, align 8".into());
        let first = self.value(format!(
            "getelementptr inbounds {{ i64, i64 }}, {{ i64, i64 }}* {storage}, i32 0, i32 0"
        ));
        self.line(format!("store i64 {length}, i64* {first}"));
        let second = self.value(format!(
            "getelementptr inbounds {{ i64, i64 }}, {{ i64, i64 }}* {storage}, i32 0, i32 1"
        ));
        self.line(format!("store i64 {index}, i64* {second}"));
        let buffer = self.value(format!("bitcast {{ i64, i64 }}* {storage} to i8*"));
        self.value(format!("call i32 @vprintf(i8* {format}, i8* {buffer})"));
        self.trap("index out of bounds", span);
        self.line("unreachable".into());
        self.terminated = true;
        self.start(&ok);
    }

    /// With bounds checks on: if the range `start..end` of a slice of `length` elements is
    /// reversed or runs past the end, print the range and trap (Rust's `&x[a..b]` panic).
    pub(super) fn range_check(&mut self, start: &str, end: &str, length: &str, span: Span) {
        if !self.options.bounds_checks {
            return;
        }
        let reversed = self.value(format!("icmp ugt i64 {start}, {end}"));
        let past_end = self.value(format!("icmp ugt i64 {end}, {length}"));
        let outside = self.value(format!("or i1 {reversed}, {past_end}"));
        let fail = self.label("range.fail");
        let ok = self.label("range.ok");
        self.line(format!("br i1 {outside}, label %{fail}, label %{ok}"));
        self.terminated = true;
        self.start(&fail);
        let text = format!(
            "{}: range out of bounds: the len is %llu but the range is %llu..%llu\n",
            self.check_site(span)
        );
        let format = self.string_constant(&text);
        self.declare("declare i32 @vprintf(i8*, i8*) nounwind".into());
        let storage = self.value("alloca { i64, i64, i64 }, align 8".into());
        for (field, value) in [length, start, end].into_iter().enumerate() {
            let slot = self.value(format!(
                "getelementptr inbounds {{ i64, i64, i64 }}, {{ i64, i64, i64 }}* {storage}, i32 0, i32 {field}"
            ));
            self.line(format!("store i64 {value}, i64* {slot}"));
        }
        let buffer = self.value(format!("bitcast {{ i64, i64, i64 }}* {storage} to i8*"));
        self.value(format!("call i32 @vprintf(i8* {format}, i8* {buffer})"));
        self.trap("range out of bounds", span);
        self.line("unreachable".into());
        self.terminated = true;
        self.start(&ok);
    }
}
