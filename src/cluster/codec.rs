//! txq's codecs for plans sent to a cluster, each wrapping Ballista's own: the logical one names
//! txq's tables by where their corpus was found (the places, the stamp of what was found, the
//! format and the table) and carries the session's prices; the physical one carries a whole
//! transcript scan ([`crate::scan`]'s wire form) and the prices again.

use crate::scan::files_table::FilesTable;
use crate::scan::{ScanExec, ScanTable};
use crate::table::corpus::Origin;
use ballista_core::serde::{BallistaLogicalExtensionCodec, BallistaPhysicalExtensionCodec};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::TableProvider;
use datafusion::common::TableReference;
use datafusion::datasource::file_format::FileFormatFactory;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{Extension, LogicalPlan, ScalarUDF};
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use datafusion_proto::physical_plan::{PhysicalExtensionCodec, PhysicalProtoConverterExtension};
use prost::Message;
use std::sync::Arc;

/// What starts every blob of txq's own (never the first byte of a protobuf message).
const MAGIC: &[u8] = b"txq\x01";

fn ours(buf: &[u8]) -> Option<&[u8]> {
    buf.strip_prefix(MAGIC)
}

fn framed(body: &[u8], buf: &mut Vec<u8>) {
    buf.extend_from_slice(MAGIC);
    buf.extend_from_slice(body);
}

/// One of txq's tables, as a plan sent to a cluster names it.
#[derive(Clone, PartialEq, prost::Message)]
struct TableNode {
    #[prost(enumeration = "TableKind", tag = "1")]
    kind: i32,
    #[prost(bytes = "vec", repeated, tag = "2")]
    places: Vec<Vec<u8>>,
    #[prost(uint64, tag = "3")]
    stamp: u64,
    #[prost(uint64, tag = "4")]
    max_line_bytes: u64,
    /// [`crate::format::Format::id`].
    #[prost(string, tag = "5")]
    format: String,
    #[prost(string, tag = "6")]
    table: String,
    /// The `prices` table's list.
    #[prost(bytes = "vec", tag = "7")]
    prices: Vec<u8>,
    /// The client's working directory, which relative places are in.
    #[prost(bytes = "vec", tag = "8")]
    cwd: Vec<u8>,
    /// The machines of the labeled places (`--label`), in order, beside `labeled_places`.
    #[prost(string, repeated, tag = "9")]
    labels: Vec<String>,
    #[prost(bytes = "vec", repeated, tag = "10")]
    labeled_places: Vec<Vec<u8>>,
    /// The client's machine, which every other file is of.
    #[prost(string, tag = "11")]
    machine: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, prost::Enumeration)]
#[repr(i32)]
enum TableKind {
    Events = 0,
    Files = 1,
    Prices = 2,
}

impl TableNode {
    fn of_origin(kind: TableKind, origin: &Origin, format: &str, table: &str) -> Result<TableNode> {
        if origin.stamp == 0 {
            return Err(DataFusionError::NotImplemented(
                "a part of the files found (an export's) is read on this machine, not on a cluster".into(),
            ));
        }
        Ok(TableNode {
            kind: kind as i32,
            places: origin.places.iter().map(|p| crate::scan::wire::bytes_of(p)).collect(),
            stamp: origin.stamp,
            max_line_bytes: origin.max_line_bytes as u64,
            format: format.to_string(),
            table: table.to_string(),
            prices: Vec::new(),
            cwd: crate::scan::wire::bytes_of(&origin.cwd),
            labels: origin.machines.labeled().iter().map(|(name, _)| name.clone()).collect(),
            labeled_places: origin
                .machines
                .labeled()
                .iter()
                .map(|(_, p)| crate::scan::wire::bytes_of(p))
                .collect(),
            machine: origin.machines.here().to_string(),
        })
    }

    fn origin(&self) -> Origin {
        Origin {
            places: self.places.iter().map(|p| crate::scan::wire::path_of(p)).collect(),
            cwd: crate::scan::wire::path_of(&self.cwd),
            stamp: self.stamp,
            max_line_bytes: usize::try_from(self.max_line_bytes).unwrap_or(usize::MAX),
            machines: crate::source::machines::Machines::new(
                self.labels
                    .iter()
                    .cloned()
                    .zip(self.labeled_places.iter().map(|p| crate::scan::wire::path_of(p)))
                    .collect(),
                self.machine.clone(),
            ),
        }
    }
}

/// Ballista's logical codec, and txq's tables and `call_cost`.
#[derive(Debug, Default)]
pub struct TxqLogicalCodec {
    inner: BallistaLogicalExtensionCodec,
}

impl LogicalExtensionCodec for TxqLogicalCodec {
    fn try_decode(&self, buf: &[u8], inputs: &[LogicalPlan], ctx: &TaskContext) -> Result<Extension> {
        self.inner.try_decode(buf, inputs, ctx)
    }

    fn try_encode(&self, node: &Extension, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode(node, buf)
    }

    fn try_decode_table_provider(
        &self,
        buf: &[u8],
        table_ref: &TableReference,
        schema: SchemaRef,
        ctx: &TaskContext,
    ) -> Result<Arc<dyn TableProvider>> {
        let Some(body) = ours(buf) else {
            return self.inner.try_decode_table_provider(buf, table_ref, schema, ctx);
        };
        let node =
            TableNode::decode(body).map_err(|e| DataFusionError::Internal(format!("{table_ref}: {e}")))?;
        let table: Arc<dyn TableProvider> = match TableKind::try_from(node.kind) {
            Ok(TableKind::Prices) => return crate::sql::prices::table_of_bytes(&node.prices),
            Ok(TableKind::Events) => super::corpora::event_table(&node.origin(), &node.format, &node.table)?,
            Ok(TableKind::Files) => super::corpora::files_table(&node.origin(), &node.format)?,
            Err(_) => {
                return Err(DataFusionError::Internal(format!("{table_ref}: a table of no known kind")));
            }
        };
        // The scheduler's search may have found other files than the client's: the same
        // columns, or a clear error rather than a wrong answer.
        if table.schema().fields() != schema.fields() {
            return Err(DataFusionError::Execution(format!(
                "{table_ref}: the transcripts changed between the client's reading and the scheduler's \
                 (their columns differ); run the statement again"
            )));
        }
        Ok(table)
    }

    fn try_encode_table_provider(
        &self,
        table_ref: &TableReference,
        node: Arc<dyn TableProvider>,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        let message = if let Some(scan) = node.downcast_ref::<ScanTable>() {
            let source = &scan.source;
            TableNode::of_origin(TableKind::Events, &scan.origin, source.data.format.id, &source.table.name)?
        } else if let Some(files) = node.downcast_ref::<FilesTable>() {
            TableNode::of_origin(TableKind::Files, &files.origin, files.data.format.id, "files")?
        } else if let Some(prices) = crate::sql::prices::bytes_of_table(node.as_ref()) {
            TableNode { kind: TableKind::Prices as i32, prices, ..Default::default() }
        } else {
            return self.inner.try_encode_table_provider(table_ref, node, buf).map_err(|_| {
                DataFusionError::NotImplemented(format!(
                    "{table_ref} is a table of this session only (made with CREATE TABLE or a view of \
                     one): it cannot be sent to a cluster"
                ))
            });
        };
        framed(&message.encode_to_vec(), buf);
        Ok(())
    }

    fn try_decode_file_format(&self, buf: &[u8], ctx: &TaskContext) -> Result<Arc<dyn FileFormatFactory>> {
        self.inner.try_decode_file_format(buf, ctx)
    }

    fn try_encode_file_format(&self, buf: &mut Vec<u8>, node: Arc<dyn FileFormatFactory>) -> Result<()> {
        self.inner.try_encode_file_format(buf, node)
    }

    fn try_decode_udf(&self, name: &str, buf: &[u8]) -> Result<Arc<ScalarUDF>> {
        decode_udf(name, buf).unwrap_or_else(|| self.inner.try_decode_udf(name, buf))
    }

    fn try_encode_udf(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> Result<()> {
        match encode_udf(node, buf) {
            true => Ok(()),
            false => self.inner.try_encode_udf(node, buf),
        }
    }
}

/// `call_cost` as bytes, with its prices, into `buf`; false (nothing written) for any other
/// function.
fn encode_udf(node: &ScalarUDF, buf: &mut Vec<u8>) -> bool {
    let prices = crate::sql::prices::bytes_of_udf(node);
    if let Some(prices) = &prices {
        framed(prices, buf);
    }
    prices.is_some()
}

/// `call_cost` with the prices it was sent with; `None` for any other function.
fn decode_udf(name: &str, buf: &[u8]) -> Option<Result<Arc<ScalarUDF>>> {
    let prices = ours(buf).filter(|_| name == crate::sql::prices::FUNCTION)?;
    Some(crate::sql::prices::udf_of_bytes(prices))
}

/// Ballista's physical codec, and txq's scan and `call_cost`.
#[derive(Debug, Default)]
pub struct TxqPhysicalCodec {
    inner: BallistaPhysicalExtensionCodec,
}

impl PhysicalExtensionCodec for TxqPhysicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        match ours(buf) {
            Some(body) => Ok(Arc::new(ScanExec::from_bytes(body, inputs)?)),
            None => self.inner.try_decode(buf, inputs, ctx, proto_converter),
        }
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        match node.downcast_ref::<ScanExec>() {
            Some(scan) => {
                framed(&scan.to_bytes()?, buf);
                Ok(())
            }
            None => self.inner.try_encode(node, buf, proto_converter),
        }
    }

    fn try_decode_udf(&self, name: &str, buf: &[u8]) -> Result<Arc<ScalarUDF>> {
        decode_udf(name, buf).unwrap_or_else(|| self.inner.try_decode_udf(name, buf))
    }

    fn try_encode_udf(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> Result<()> {
        match encode_udf(node, buf) {
            true => Ok(()),
            false => self.inner.try_encode_udf(node, buf),
        }
    }
}
