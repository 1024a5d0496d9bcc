/**
 * What gRPC server reflection answers, computed once from the served services' descriptors: their
 * files and every file those import (well-known types and google/api included), the file defining
 * each symbol, and the extensions by extended message. Files are the FileDescriptorProtos that
 * protobuf-es embeds in gen/, serialized again; a file comes with everything it imports,
 * requested file first, so that a client can build it without another round trip.
 */
import { toBinary, type DescExtension, type DescFile, type DescMessage, type DescService, type DescEnum } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';

export interface ReflectionIndex {
  /** Full names of the served services. */
  services: string[];
  /** The serialized file and everything it imports; undefined when unknown. */
  fileByName(name: string): Uint8Array[] | undefined;
  fileContainingSymbol(symbol: string): Uint8Array[] | undefined;
  fileContainingExtension(extendee: string, fieldNumber: number): Uint8Array[] | undefined;
  /** The extension field numbers of a message; undefined when the message is unknown. */
  extensionNumbers(extendee: string): number[] | undefined;
}

export function createReflectionIndex(services: readonly DescService[]): ReflectionIndex {
  const files = new Map<string, DescFile>();
  const symbols = new Map<string, DescFile>();
  const extensions = new Map<string, Map<number, DescFile>>();

  const addMessage = (file: DescFile, message: DescMessage): void => {
    symbols.set(message.typeName, file);
    message.nestedMessages.forEach((nested) => addMessage(file, nested));
    message.nestedEnums.forEach((nested) => addEnum(file, nested));
    message.nestedExtensions.forEach((nested) => addExtension(file, nested));
  };
  const addEnum = (file: DescFile, desc: DescEnum): void => void symbols.set(desc.typeName, file);
  const addExtension = (file: DescFile, ext: DescExtension): void => {
    symbols.set(ext.typeName, file);
    const byNumber = extensions.get(ext.extendee.typeName) ?? new Map<number, DescFile>();
    byNumber.set(ext.number, file);
    extensions.set(ext.extendee.typeName, byNumber);
  };
  const addFile = (file: DescFile): void => {
    if (files.has(file.proto.name)) return;
    files.set(file.proto.name, file);
    file.dependencies.forEach(addFile);
    file.messages.forEach((message) => addMessage(file, message));
    file.enums.forEach((desc) => addEnum(file, desc));
    file.extensions.forEach((ext) => addExtension(file, ext));
    for (const service of file.services) {
      symbols.set(service.typeName, file);
      service.methods.forEach((method) => symbols.set(`${service.typeName}.${method.name}`, file));
    }
  };
  services.forEach((service) => addFile(service.file));

  const serialized = new Map<DescFile, Uint8Array>();
  const bytes = (file: DescFile): Uint8Array => {
    let data = serialized.get(file);
    if (data === undefined) serialized.set(file, (data = toBinary(FileDescriptorProtoSchema, file.proto)));
    return data;
  };
  /** The file first, then its imports, transitively, each once. */
  const withImports = (file: DescFile | undefined): Uint8Array[] | undefined => {
    if (file === undefined) return undefined;
    const seen = new Set<DescFile>();
    const visit = (f: DescFile): void => {
      if (seen.has(f)) return;
      seen.add(f);
      f.dependencies.forEach(visit);
    };
    visit(file);
    return [...seen].map(bytes);
  };

  return {
    services: services.map((service) => service.typeName).sort(),
    fileByName: (name) => withImports(files.get(name)),
    fileContainingSymbol: (symbol) => withImports(symbols.get(symbol.replace(/^\./, ''))),
    fileContainingExtension: (extendee, fieldNumber) => withImports(extensions.get(extendee)?.get(fieldNumber)),
    extensionNumbers(extendee) {
      if (!symbols.has(extendee)) return undefined;
      return [...(extensions.get(extendee)?.keys() ?? [])].sort((a, b) => a - b);
    },
  };
}
