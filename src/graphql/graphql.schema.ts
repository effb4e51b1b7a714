
/*
 * -------------------------------------------------------
 * THIS FILE WAS AUTOMATICALLY GENERATED (DO NOT MODIFY)
 * -------------------------------------------------------
 */

/* tslint:disable */
/* eslint-disable */

// Run `npm run codegen` after changing schema.graphql; CI fails when this file is stale.

export interface UpdateViewerProfileInput {
    name: string;
}

export interface IQuery {
    viewer: User;
    user?: Nullable<User>;
}

export interface IMutation {
    updateViewerProfile: UpdateViewerProfilePayload;
}

export interface User {
    id: string;
    username: string;
    name: string;
}

export interface UpdateViewerProfilePayload {
    user?: Nullable<User>;
    userErrors: UserError[];
}

export interface UserError {
    field?: Nullable<string[]>;
    message: string;
    code: string;
}

export interface ISchema {
    Query: IQuery;
    Mutation: IMutation;
}

type Nullable<T> = T | null;
