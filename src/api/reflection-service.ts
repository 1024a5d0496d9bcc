/**
 * gRPC server reflection, grpc.reflection.v1 and the older v1alpha that many tools still call
 * first (grpcurl, grpcui); both have the same messages under two package names, so one function
 * answers for both. Public (the auth interceptor lets it through) and switchable off with
 * GATEHOUSE_GRPC_REFLECTION. It is a bidirectional stream: one answer per request, in order.
 */
import { Code, type ServiceImpl } from '@connectrpc/connect';
import { ServerReflection as ServerReflectionV1 } from '../../gen/grpc/reflection/v1/reflection_pb.js';
import { ServerReflection as ServerReflectionV1Alpha } from '../../gen/grpc/reflection/v1alpha/reflection_pb.js';
import type { ReflectionIndex } from './reflection-index.ts';

/** The request oneof, as both versions generate it. */
type Question =
  | { case: 'fileByFilename' | 'fileContainingSymbol' | 'allExtensionNumbersOfType' | 'listServices'; value: string }
  | { case: 'fileContainingExtension'; value: { containingType: string; extensionNumber: number } }
  | { case: undefined; value?: undefined };

type Answer =
  | { case: 'fileDescriptorResponse'; value: { fileDescriptorProto: Uint8Array[] } }
  | { case: 'allExtensionNumbersResponse'; value: { baseTypeName: string; extensionNumber: number[] } }
  | { case: 'listServicesResponse'; value: { service: { name: string }[] } }
  | { case: 'errorResponse'; value: { errorCode: number; errorMessage: string } };

export function answer(index: ReflectionIndex, question: Question): Answer {
  const files = (found: Uint8Array[] | undefined, what: string): Answer =>
    found === undefined ? notFound(what) : { case: 'fileDescriptorResponse', value: { fileDescriptorProto: found } };
  switch (question.case) {
    case 'listServices':
      return { case: 'listServicesResponse', value: { service: index.services.map((name) => ({ name })) } };
    case 'fileByFilename':
      return files(index.fileByName(question.value), `file not found: ${question.value}`);
    case 'fileContainingSymbol':
      return files(index.fileContainingSymbol(question.value), `symbol not found: ${question.value}`);
    case 'fileContainingExtension': {
      const { containingType, extensionNumber } = question.value;
      return files(index.fileContainingExtension(containingType, extensionNumber), `extension not found: ${containingType} ${extensionNumber}`);
    }
    case 'allExtensionNumbersOfType': {
      const numbers = index.extensionNumbers(question.value);
      if (numbers === undefined) return notFound(`type not found: ${question.value}`);
      return { case: 'allExtensionNumbersResponse', value: { baseTypeName: question.value, extensionNumber: numbers } };
    }
    case undefined:
      return { case: 'errorResponse', value: { errorCode: Code.InvalidArgument, errorMessage: 'empty reflection request' } };
  }
}

function notFound(message: string): Answer {
  return { case: 'errorResponse', value: { errorCode: Code.NotFound, errorMessage: message } };
}

export function createReflectionV1(index: ReflectionIndex): ServiceImpl<typeof ServerReflectionV1> {
  return {
    async *serverReflectionInfo(requests) {
      for await (const request of requests) {
        yield { validHost: request.host, originalRequest: request, messageResponse: answer(index, request.messageRequest) };
      }
    },
  };
}

export function createReflectionV1Alpha(index: ReflectionIndex): ServiceImpl<typeof ServerReflectionV1Alpha> {
  return {
    async *serverReflectionInfo(requests) {
      for await (const request of requests) {
        yield { validHost: request.host, originalRequest: request, messageResponse: answer(index, request.messageRequest) };
      }
    },
  };
}

