package local.olx.datahub;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.linkedin.common.urn.DatasetUrn;
import com.linkedin.common.urn.Urn;
import com.linkedin.data.DataMap;
import com.linkedin.data.codec.JacksonDataCodec;
import com.linkedin.data.schema.DataSchema;
import com.linkedin.data.schema.RecordDataSchema;
import com.linkedin.data.schema.validation.CoercionMode;
import com.linkedin.data.schema.validation.RequiredMode;
import com.linkedin.data.schema.validation.UnrecognizedFieldMode;
import com.linkedin.data.schema.validation.ValidateDataAgainstSchema;
import com.linkedin.data.schema.validation.ValidationOptions;
import com.linkedin.data.schema.validation.ValidationResult;
import com.linkedin.data.template.DataTemplateUtil;
import com.linkedin.data.template.RecordTemplate;
import com.linkedin.mxe.MetadataChangeProposal;
import io.datahubproject.openlineage.config.DatahubOpenlineageConfig;
import io.datahubproject.openlineage.converter.OpenLineageToDataHub;
import io.datahubproject.openlineage.dataset.DatahubDataset;
import io.datahubproject.openlineage.dataset.DatahubJob;
import io.openlineage.client.OpenLineage;
import io.openlineage.client.OpenLineageClientUtils;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.net.URISyntaxException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

/**
 * Runs OpenLineage run events (JSON Lines on standard input) through DataHub's own converter,
 * exactly as DataHub's REST endpoint does ({@code OpenLineageToDataHub.convertRunEventToJob},
 * then {@code DatahubJob.toMcps}), and checks every aspect it makes against its Pegasus schema.
 *
 * <p>Prints one JSON line per input line: {@code ok}, the {@code error} when the converter threw
 * (its class and message, as the endpoint's 500 would carry), the URNs of the DataFlow, DataJob
 * and DataProcessInstance, the input and output dataset URNs, the aspects made, and the
 * {@code invalid} ones (aspect or proposal not valid against its schema as DataHub's server
 * validates it, or a URN that does not parse back to itself or that the server would refuse).
 *
 * <p>Usage: {@code java -cp 'LIB/*' local.olx.datahub.ConverterCheck [--orchestrator NAME]
 * [--connection NAMESPACE=INSTANCE]...}: NAME is the server's {@code
 * DATAHUB_OPENLINEAGE_ORCHESTRATOR}, and each connection a dataset namespace (such as {@code
 * postgres://host:5432}) the server gives a platform instance (the newest converter only).
 */
public final class ConverterCheck {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final JacksonDataCodec CODEC = new JacksonDataCodec();
  /** As DataHub's server validates an aspect (its RecordTemplateValidator). */
  private static final ValidationOptions STRICT =
      new ValidationOptions(
          RequiredMode.CAN_BE_ABSENT_IF_HAS_DEFAULT,
          CoercionMode.NORMAL,
          UnrecognizedFieldMode.DISALLOW);

  private ConverterCheck() {}

  public static void main(String[] args) throws Exception {
    String orchestrator = null;
    Map<String, String> connections = new TreeMap<>();
    for (int i = 0; i < args.length; i++) {
      if ("--orchestrator".equals(args[i]) && i + 1 < args.length) {
        orchestrator = args[++i];
      } else if ("--connection".equals(args[i]) && i + 1 < args.length
          && args[i + 1].contains("=")) {
        String[] pair = args[++i].split("=", 2);
        connections.put(pair[0], pair[1]);
      } else {
        System.err.println(
            "usage: ConverterCheck [--orchestrator NAME] [--connection NAMESPACE=INSTANCE]..."
                + " < events.jsonl");
        System.exit(2);
      }
    }
    CONNECTIONS.putAll(connections);
    Map<String, Class<? extends RecordTemplate>> aspects = aspectClasses();
    PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    int number = 0;
    while ((line = in.readLine()) != null) {
      number++;
      if (line.isBlank()) {
        continue;
      }
      out.println(JSON.writeValueAsString(check(number, line, orchestrator, aspects)));
    }
    out.flush();
  }

  /**
   * Connection namespace -> platform instance ({@code --connection}): the newest converter's
   * per-connection platform instances, for a server that sets them. Empty: as the endpoint is.
   */
  private static final Map<String, String> CONNECTIONS = new TreeMap<>();

  /** The converter configured as DataHub's REST endpoint configures it. */
  static DatahubOpenlineageConfig endpointConfig(String orchestrator) throws Exception {
    DatahubOpenlineageConfig.DatahubOpenlineageConfigBuilder builder =
        DatahubOpenlineageConfig.builder()
            .materializeDataset(true)
            .includeSchemaMetadata(true)
            .captureColumnLevelLineage(true)
            .usePatch(false)
            .fabricType(com.linkedin.common.FabricType.PROD);
    Method setting = null;
    for (Method method : builder.getClass().getMethods()) {
      if (method.getName().equals("orchestrator") && method.getParameterCount() == 1) {
        setting = method;
      }
    }
    if (setting != null) {
      setting.invoke(builder, orchestrator);
    } else if (orchestrator != null) {
      throw new IllegalArgumentException("this converter has no orchestrator setting");
    }
    if (!CONNECTIONS.isEmpty()) {
      builder.getClass().getMethod("connectionInstanceMap", Map.class)
          .invoke(builder, connectionInstances());
    }
    return builder.build();
  }

  /** {@link #CONNECTIONS} as the newest converter's {@code ConnectionInstanceDetail}s. */
  private static Map<String, Object> connectionInstances() throws Exception {
    Class<?> detail =
        Class.forName("io.datahubproject.openlineage.dataset.ConnectionInstanceDetail");
    Map<String, Object> map = new HashMap<>();
    for (Map.Entry<String, String> entry : CONNECTIONS.entrySet()) {
      Object builder = detail.getMethod("builder").invoke(null);
      builder.getClass().getMethod("platformInstance", Optional.class)
          .invoke(builder, Optional.of(entry.getValue()));
      map.put(entry.getKey(), builder.getClass().getMethod("build").invoke(builder));
    }
    return map;
  }

  static ObjectNode check(
      int number,
      String line,
      String orchestrator,
      Map<String, Class<? extends RecordTemplate>> aspects)
      throws Exception {
    ObjectNode result = JSON.createObjectNode();
    result.put("line", number);
    OpenLineage.RunEvent event;
    try {
      event = OpenLineageClientUtils.runEventFromJson(line);
      result.put("runId", String.valueOf(event.getRun().getRunId()));
      result.put("job", event.getJob().getNamespace() + " " + event.getJob().getName());
      result.put("eventType", String.valueOf(event.getEventType()));
    } catch (RuntimeException e) {
      result.put("ok", false);
      result.put("error", "not an OpenLineage run event: " + describe(e));
      return result;
    }
    DatahubJob job;
    List<MetadataChangeProposal> mcps;
    // A fresh config per event, as the endpoint builds one per request (it keeps URN aliases).
    DatahubOpenlineageConfig config = endpointConfig(orchestrator);
    try {
      job = OpenLineageToDataHub.convertRunEventToJob(event, config);
      mcps = job.toMcps(config);
    } catch (Exception e) {
      result.put("ok", false);
      result.put("error", describe(e));
      return result;
    }
    result.put("dataFlow", String.valueOf(job.getFlowUrn()));
    result.put("dataJob", String.valueOf(job.getJobUrn()));
    result.put("dataProcessInstance", String.valueOf(job.getDataProcessInstanceUrn()));
    ArrayNode inputs = result.putArray("inputs");
    for (DatahubDataset dataset : job.getInSet()) {
      inputs.add(dataset.getUrn().toString());
    }
    ArrayNode outputs = result.putArray("outputs");
    for (DatahubDataset dataset : job.getOutSet()) {
      outputs.add(dataset.getUrn().toString());
    }
    ArrayNode made = result.putArray("aspects");
    ArrayNode invalid = result.putArray("invalid");
    checkUrn(String.valueOf(job.getFlowUrn()), invalid);
    checkUrn(String.valueOf(job.getJobUrn()), invalid);
    checkUrn(String.valueOf(job.getDataProcessInstanceUrn()), invalid);
    for (MetadataChangeProposal mcp : mcps) {
      String where = mcp.getEntityType() + " " + mcp.getEntityUrn() + " " + mcp.getAspectName();
      made.add(where);
      checkUrn(String.valueOf(mcp.getEntityUrn()), invalid);
      validate(where + " (proposal)", mcp.data(), mcp.schema(), invalid);
      Class<? extends RecordTemplate> type = aspects.get(mcp.getAspectName());
      if (type == null) {
        invalid.add(where + ": no Pegasus aspect of that name");
        continue;
      }
      DataMap aspect =
          CODEC.stringToMap(mcp.getAspect().getValue().asString(StandardCharsets.UTF_8));
      validate(where, aspect, DataTemplateUtil.getSchema(type), invalid);
    }
    for (DatahubDataset dataset : job.getInSet()) {
      checkDataset(dataset.getUrn(), invalid);
    }
    for (DatahubDataset dataset : job.getOutSet()) {
      checkDataset(dataset.getUrn(), invalid);
    }
    result.put("ok", invalid.isEmpty());
    if (!invalid.isEmpty()) {
      result.put("error", invalid.size() + " invalid: " + invalid.get(0).asText());
    }
    return result;
  }

  /** A dataset's URN must be one DataHub can read back as a dataset, with a name. */
  private static void checkDataset(DatasetUrn urn, ArrayNode invalid) {
    checkUrn(urn.toString(), invalid);
    try {
      if (DatasetUrn.createFromString(urn.toString()).getDatasetNameEntity().isEmpty()) {
        invalid.add(urn + ": empty dataset name");
      }
    } catch (URISyntaxException e) {
      invalid.add(urn + ": not readable as a dataset URN: " + e.getMessage());
    }
  }

  private static void validate(String where, DataMap data, DataSchema schema, ArrayNode invalid) {
    ValidationResult validation = ValidateDataAgainstSchema.validate(data, schema, STRICT);
    if (!validation.isValid()) {
      invalid.add(where + ": " + validation.getMessages().toString().replace('\n', ' '));
    }
  }

  /**
   * A URN is stored by its string: it must parse back to the same string, and pass the checks
   * DataHub's server makes before it writes an entity (UrnValidationUtil.validateUrn): no
   * leading or trailing whitespace, at most 512 bytes URL-encoded, no U+241F, and no {@code (}
   * {@code )} in a component, nor {@code ,} in a component of a tuple.
   */
  private static void checkUrn(String urn, ArrayNode invalid) {
    Urn parsed;
    try {
      parsed = Urn.createFromString(urn);
    } catch (URISyntaxException e) {
      invalid.add(urn + ": " + e.getMessage());
      return;
    }
    if (!parsed.toString().equals(urn)) {
      invalid.add(urn + ": parses back as " + parsed);
    }
    if (!urn.trim().equals(urn)) {
      invalid.add(urn + ": leading or trailing whitespace");
    }
    if (!"schemaField".equals(parsed.getEntityType())
        && URLEncoder.encode(urn, StandardCharsets.UTF_8).length() > 512) {
      invalid.add(urn + ": longer than 512 bytes URL-encoded");
    }
    if (urn.contains("\u241f")) {
      invalid.add(urn + ": holds U+241F");
    }
    illegalParts(parsed, invalid, urn);
  }

  private static void illegalParts(Urn urn, ArrayNode invalid, String whole) {
    List<String> parts = urn.getEntityKey().getParts();
    for (String part : parts) {
      if (part.startsWith("urn:li:")) {
        try {
          illegalParts(Urn.createFromString(part), invalid, whole);
        } catch (URISyntaxException e) {
          invalid.add(whole + ": component " + part + ": " + e.getMessage());
        }
      } else if (part.contains("(") || part.contains(")")
          || (parts.size() > 1 && part.contains(","))) {
        invalid.add(whole + ": component '" + part + "' holds ( ) or ,");
      }
    }
  }

  private static String describe(Throwable e) {
    String message = e.getMessage();
    return e.getClass().getName() + (message == null ? "" : ": " + message.replace('\n', ' '));
  }

  /**
   * Every aspect record among the generated model classes, by its aspect name (the
   * {@code @Aspect.name} of its schema): the classes are in the jar this class is in.
   */
  @SuppressWarnings("unchecked")
  static Map<String, Class<? extends RecordTemplate>> aspectClasses() throws IOException {
    Map<String, Class<? extends RecordTemplate>> found = new TreeMap<>();
    File jar;
    try {
      jar = new File(MetadataChangeProposal.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException e) {
      throw new IOException(e);
    }
    try (JarFile file = new JarFile(jar)) {
      Enumeration<JarEntry> entries = file.entries();
      while (entries.hasMoreElements()) {
        String name = entries.nextElement().getName();
        if (!name.startsWith("com/linkedin/") || !name.endsWith(".class") || name.contains("$")) {
          continue;
        }
        Class<?> type;
        try {
          type = Class.forName(name.substring(0, name.length() - 6).replace('/', '.'));
        } catch (ClassNotFoundException | LinkageError e) {
          continue;
        }
        if (!RecordTemplate.class.isAssignableFrom(type)) {
          continue;
        }
        DataSchema schema = DataTemplateUtil.getSchema(type);
        if (schema instanceof RecordDataSchema) {
          Object aspect = schema.getProperties().get("Aspect");
          if (aspect instanceof DataMap && ((DataMap) aspect).get("name") instanceof String) {
            found.put(
                (String) ((DataMap) aspect).get("name"), (Class<? extends RecordTemplate>) type);
          }
        }
      }
    }
    return found;
  }
}
